package scan

import "regexp"

// mustCompile compiles a pattern of the format tables. The tables are
// fixed at build time and covered by tests, so a bad pattern is a
// programming error caught by every test run.
func mustCompile(p string) *regexp.Regexp { return regexp.MustCompile(p) }
