package catalog

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors wrapped by *Error values (test them with errors.Is).
var (
	// ErrSyntax: the file is not valid YAML.
	ErrSyntax = errors.New("catalog: YAML syntax")
	// ErrSchema: a missing or unknown schema number.
	ErrSchema = errors.New("catalog: unsupported schema")
	// ErrUnknownField: a key the format does not define (decoding is strict).
	ErrUnknownField = errors.New("catalog: unknown field")
	// ErrInvalid: a field is present but its value is wrong (type, range, pattern).
	ErrInvalid = errors.New("catalog: invalid value")
	// ErrMissing: a required field is absent.
	ErrMissing = errors.New("catalog: missing field")
	// ErrDuplicate: an id is used twice.
	ErrDuplicate = errors.New("catalog: duplicate id")
	// ErrTooLarge: a catalog file is larger than MaxFileSize.
	ErrTooLarge = errors.New("catalog: file too large")
	// ErrTestLog: a defect's test log is missing or does not match the defect.
	ErrTestLog = errors.New("catalog: test log")
	// ErrTaughtByValidation: a rule's taught_by names a validation log
	// (testdata/validation/): no rule may be written from those.
	ErrTaughtByValidation = errors.New("catalog: taught by a validation log")
	// ErrOverfit (a warning of LintWarnings): only the log(s) a rule was
	// written from match it: it names one crash, not a subsystem or defect.
	ErrOverfit = errors.New("catalog: rule matches only the log it was taught by")
)

// Error is one problem found in a catalog file. File, Line and Field say
// where (Field is a path such as `defects[3].match[0].frames[1]`); Err is
// one of the sentinel errors above.
type Error struct {
	File  string // catalog file name
	Line  int    // 1-based line, 0 when not known
	Field string // field path, "" for the whole file
	Msg   string // what is wrong
	Err   error  // the sentinel (ErrUnknownField, ...) or an I/O error
}

// Error formats the problem as "file:line: field: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in one load or lint, in file and line order.
// errors.As(err, &*Error) finds the first; errors.Is matches any sentinel.
type Errors []*Error

// Error joins the problems, one per line.
func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// maxErrors bounds the problems collected from one file.
const maxErrors = 100
