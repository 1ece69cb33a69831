package scan

import "testing"

// BenchmarkStartsIncident: the lines no rule recognizes that reach
// startsIncident between incidents (headerlessStartBytes), most of them
// ordinary digit-led log lines.
func BenchmarkStartsIncident(b *testing.B) {
	var p parser
	p.init(ScanOptions{})
	lines := []string{
		"2025-03-03 10:15:09,145 INFO  [pool-3-thread-1] org.apache.doris.common.jni.JniScanner - scanner opened",
		"  12345 rows read",
		"@ 0x55d1c3f0a1b2 doris::Foo::bar()",
	}
	for b.Loop() {
		for _, l := range lines {
			startsIncident(kOther, l, &p)
		}
	}
}
