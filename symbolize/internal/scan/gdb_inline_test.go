package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gdb prints `0xADDR in` on the innermost frame of each inline group (and
// may omit it on #0); the other frames of a group have no address and the
// last of them is the physical function. All but the last frame of a group
// are marked Inlined, so that signatures can be made of physical frames.
func TestGDBInlineFrames(t *testing.T) {
	bt := `Program terminated with signal SIGSEGV, Segmentation fault.
#0  std::vector<long>::size (this=0x0) at /usr/include/c++/11/bits/stl_vector.h:919
#1  starrocks::lake::collect_garbage_files (files=..., tablet=...) at be/src/storage/lake/vacuum.cpp:37
#2  0x0000555555a01234 in __gnu_cxx::__normal_iterator<long*>::__normal_iterator (i=...) at /usr/include/c++/11/bits/stl_iterator.h:1028
#3  std::vector<long>::begin (this=...) at /usr/include/c++/11/bits/stl_vector.h:812
#4  starrocks::lake::vacuum_tablet (tablet_id=10023) at be/src/storage/lake/vacuum.cpp:88
#5  0x0000555555a05678 in starrocks::lake::vacuum (request=...) at be/src/storage/lake/vacuum.cpp:120
#6  <signal handler called>
#7  0x00007ffff7a2d609 in start_thread (arg=<optimized out>) at pthread_create.c:477
#8  0x00007ffff7952133 in clone () at ../sysdeps/unix/sysv/linux/x86_64/clone.S:95
`
	cs := parseString(t, bt)
	require.Len(t, cs, 1)
	ct := cs[0].CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 9)
	want := []bool{true, false, true, true, false, false, false, false, false}
	for i, f := range ct.Frames {
		assert.Equal(t, want[i], f.Inlined, "frame #%d %s", f.Index, f.Function)
	}
	// The physical frames are the ones a key is made of.
	var physical []string
	for _, f := range ct.Frames {
		if !f.Inlined {
			physical = append(physical, f.Function)
		}
	}
	assert.Equal(t, []string{"starrocks::lake::collect_garbage_files", "starrocks::lake::vacuum_tablet", "starrocks::lake::vacuum", "<signal handler called>", "start_thread", "clone"}, physical)
}

// TestGDBFrameEcho: `frame N`, `up` and `down` after `bt` print the
// selected frame again (GDB manual, "Selecting a Frame"); the echo is not
// a new backtrace, wherever the user stepped to, and a second backtrace
// that differs still is one.
func TestGDBFrameEcho(t *testing.T) {
	bt := `(gdb) bt
#0  num_available_threads (this=0x7ba70000) at /src/be/src/runtime/thread_resource_mgr.h:148
#1  release_thread_token (required=false, this=0x7ba70000) at /src/be/src/runtime/thread_resource_mgr.h:290
#2  doris::HashJoinNode::build_side_thread (this=<optimized out>, state=<optimized out>, status=0x7f9d616e15e0) at /src/be/src/exec/hash_join_node.cpp:180
#3  0x0000000001a794bd in thread_proxy ()
#4  0x00007f9ed552adc5 in start_thread () from /lib64/libpthread.so.0
#5  0x00007f9ed583521d in clone () from /lib64/libc.so.6
`
	for _, echo := range []string{
		"(gdb) f 0\n#0  num_available_threads (this=0x7ba70000) at /src/be/src/runtime/thread_resource_mgr.h:148\n148\t    return _num_threads;\n",
		"(gdb) frame 2\n#2  doris::HashJoinNode::build_side_thread (this=<optimized out>, state=<optimized out>, status=0x7f9d616e15e0) at /src/be/src/exec/hash_join_node.cpp:180\n",
		"(gdb) up\n#1  release_thread_token (required=false, this=0x7ba70000) at /src/be/src/runtime/thread_resource_mgr.h:290\n(gdb) down\n#0  num_available_threads (this=0x7ba70000) at /src/be/src/runtime/thread_resource_mgr.h:148\n",
	} {
		cs := parseText(t, bt+echo)
		require.Len(t, cs, 1, echo)
		th := cs[0].CrashingThread()
		require.NotNil(t, th)
		require.Len(t, th.Frames, 6, echo)
		assert.Equal(t, "doris::HashJoinNode::build_side_thread", th.Frames[2].Function)
		assert.Contains(t, strings.Join(cs[0].Notes, "\n"), "printed frame #", echo)
	}
	// Another backtrace after the first (its #0 differs) is one.
	other := "(gdb) bt\n#0  0x00007f9ed583521d in epoll_wait () from /lib64/libc.so.6\n#1  0x0000000001a794bd in thread_proxy ()\n"
	cs := parseText(t, bt+other)
	require.Len(t, cs, 2)
	// The same backtrace printed again (`bt` typed twice, or pasted
	// twice) is the same crash: one incident with its six frames.
	cs = parseText(t, bt+bt)
	require.Len(t, cs, 1)
	require.Len(t, cs[0].CrashingThread().Frames, 6)
}
