// Command collector follows a growing be.out (like `tail -F`, also across
// truncation by a restart script and rotation) and prints one JSON line per
// crash as soon as it is written: the same pipeline.Result that
// `crashsig classify --json` prints. A crash is reported within
// symbolize.DefaultFollowIdleTimeout (2 s) of its last line, even when the
// crashed process writes nothing after it. Ctrl-C or SIGTERM (systemd,
// docker stop) stops it once it has reported the crash it was reading.
// With --follow=false it reads the file once, as classify does (a rotated
// be.out.1.gz, a core), and exits.
//
// With --state FILE it survives restarts: after each crash it reports (and
// at its start) it records in FILE the followed file's identity (device
// and inode) and the offset after the crash's last line, written to a
// temporary file renamed over FILE, so that a collector killed at any
// moment leaves the old state or the new one, never half of one. Started
// again, it resumes at that offset when be.out is still the same file, and
// reads it from its start when it is another (rotated: a new log): each
// crash is reported once across restarts; one that was read but not yet
// reported when the collector was killed is reported by the next run; a
// FILE that is not a state (cut by a full disk) is ignored with a warning,
// so a supervised collector still starts (reporting again, not missing). A
// restarted collector does not see a startup banner before the offset, so
// a crash that prints no version gets --assume-version's. --from-end
// starts at the end of be.out when there is no state (the crashes already
// in it are not reported).
//
//	go run ./examples/collector [--follow=false] [--state FILE] [--from-end] [--assume-version 3.3.9] /opt/starrocks/be/log/be.out
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
)

// config is what the flags say.
type config struct {
	follow  bool
	state   string // --state: the state file, or ""
	fromEnd bool
	opts    pipeline.Options
}

func main() {
	var c config
	flag.BoolVar(&c.follow, "follow", true, "keep reading as the file grows")
	flag.StringVar(&c.state, "state", "", "record the offset reached in `FILE` and resume from it when started again")
	flag.BoolVar(&c.fromEnd, "from-end", false, "start at the end of the file when there is no state")
	flag.StringVar(&c.opts.AssumeVersion, "assume-version", "", "version of the crashes that do not print one")
	flag.Parse()
	if flag.NArg() != 1 || (!c.follow && (c.state != "" || c.fromEnd)) {
		fmt.Fprintln(os.Stderr, "usage: collector [--follow=false | [--state FILE] [--from-end]] [--assume-version V] be.out")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, flag.Arg(0), c, os.Stdout, os.Stderr))
}

func run(ctx context.Context, path string, c config, stdout, stderr io.Writer) int {
	opts := c.opts
	if c.follow {
		opts.IdleFlush = symbolize.DefaultFollowIdleTimeout
	}
	p, err := pipeline.New(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "collector:", err)
		return 1
	}
	defer p.Close()
	// Once, the file is read as classify reads it (compressed, a core;
	// binary junk refused); followed, it is a live text stream.
	var results iter.Seq2[*pipeline.Result, error]
	var r *pipeline.Follower
	if !c.follow {
		results = p.File(ctx, path)
	} else {
		var saved *state
		if c.state != "" {
			saved, err = loadState(c.state)
			switch {
			case errors.Is(err, errBadState):
				// A damaged state (a disk that filled up under another
				// writer) must not keep a supervised collector from
				// starting: read as without one, reporting again
				// rather than missing a crash.
				fmt.Fprintf(stderr, "collector: %v; ignoring it (crashes already reported may be reported again)\n", err)
			case err != nil:
				fmt.Fprintln(stderr, "collector:", err)
				return 1
			}
		}
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "collector: %s does not exist yet; waiting for it\n", path)
		}
		r = pipeline.FollowFrom(ctx, path, 100*time.Millisecond, func(fi os.FileInfo) int64 {
			return startAt(fi, saved, c, stderr)
		}) // io.EOF once ctx is done
		defer r.Close()
		if err := saveState(c.state, r, 0); err != nil { // where it starts
			fmt.Fprintln(stderr, "collector:", err)
			return 1
		}
		results = p.Text(ctx, path, r)
	}
	enc := pipeline.NewEncoder(stdout) // the bytes classify --json prints
	for res, err := range results {
		if err == nil {
			err = enc.Encode(res)
		}
		if err == nil && r != nil {
			err = saveState(c.state, r, res.EndLine)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(stderr, "collector:", err)
			return 1
		}
	}
	return 0
}

// state is what --state records: the followed file and the offset after
// the last crash reported.
type state struct {
	Dev    uint64 `json:"dev"`
	Ino    uint64 `json:"ino"`
	Offset int64  `json:"offset"`
}

// startAt is the offset to start reading fi, the followed file, at.
func startAt(fi os.FileInfo, saved *state, c config, stderr io.Writer) int64 {
	if saved != nil {
		if dev, ino, ok := fileID(fi); ok && dev == saved.Dev && ino == saved.Ino {
			fmt.Fprintf(stderr, "collector: resuming at byte %d (%s)\n", saved.Offset, c.state)
			return saved.Offset
		}
		fmt.Fprintf(stderr, "collector: %s is of another file (rotated): reading from the start\n", c.state)
		return 0
	}
	if c.fromEnd {
		return fi.Size()
	}
	return 0
}

// errBadState marks a state file that is not the JSON saveState writes.
var errBadState = errors.New("not a collector state")

// loadState reads the state file; nil when there is none. A file that is
// not JSON of a state gives an error matching errBadState.
func loadState(name string) (*state, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("state %s: %w: %w", name, errBadState, err)
	}
	return &s, nil
}

// saveState records in name (when not "") where the text after line of
// r ends: written to a temporary file in the same directory, synced and
// renamed over name. A line r has no position for (in a file rotated
// away) leaves the state as it was.
func saveState(name string, r *pipeline.Follower, line int) error {
	if name == "" {
		return nil
	}
	fi, off, ok := r.Position(line)
	if !ok {
		return nil
	}
	dev, ino, ok := fileID(fi)
	if !ok {
		return nil
	}
	b, err := json.Marshal(state{Dev: dev, Ino: ino, Offset: off})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
