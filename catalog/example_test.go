package catalog_test

import (
	"fmt"
	"strings"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// Classify a crash log with the embedded catalog.
func ExampleCatalog_Classify() {
	cat, err := catalog.Default()
	if err != nil {
		panic(err)
	}
	log := `*** Aborted at 1652960713 (unix time) try "date -d @1652960713" if you are using GNU date ***
PC: @          0x41f9851 starrocks::RowsetMetaPB::MergeFrom()
*** SIGSEGV (@0x8) received by PID 12079 (TID 0x7f5335458700) from PID 8; stack trace: ***
    @          0x4bf3b52 google::(anonymous namespace)::FailureSignalHandler()
    @     0x7f540e9ee630 (unknown)
    @          0x41f9851 starrocks::RowsetMetaPB::MergeFrom()
    @          0x386b957 starrocks::TabletMeta::to_meta_pb()
    @          0x386bdc8 starrocks::TabletMeta::_save_meta()
    @          0x386c38d starrocks::TabletMeta::save_meta()
    @          0x3843fbb starrocks::Tablet::save_meta()
    @          0x384d263 starrocks::Tablet::delete_expired_stale_rowset()
    @          0x3860020 starrocks::TabletManager::start_trash_sweep()
    @          0x381ed97 starrocks::StorageEngine::_start_trash_sweep()
    @          0x36e47b9 starrocks::StorageEngine::_garbage_sweeper_thread_callback()
`
	sc := symbolize.NewScanner(strings.NewReader(log), symbolize.ScanOptions{Source: "be.out"})
	for sc.Next() {
		c := sc.Crash()
		v := cat.Classify(c, signature.Generate(c))
		fmt.Println(v.Path, v.Area)
		if v.Defect != nil {
			fmt.Println(v.Defect.ID, v.Status)
		}
	}
	// Output:
	// background trash-sweep
	// SR-6725-trash-sweep-rowsetmetapb-mergefrom version-unknown
}

// Decide what a version means for a fix.
func ExampleParseVersion() {
	for _, s := range []string{"doris-2.1.6-rc04(AVX2) RELEASE (build git://host@4f5a6b7)", "3.3.5-6d81f75", "main DEBUG (build 1a2b3c4)"} {
		v, err := catalog.ParseVersion(s)
		if err != nil {
			panic(err)
		}
		fix, _ := catalog.ParseVersion("3.3.9")
		fmt.Println(v, v.Branch(), catalog.Compare(v, fix))
	}
	// Output:
	// 2.1.6 2.1 -1
	// 3.3.5 3.3 -1
	// main main 1
}
