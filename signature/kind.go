package signature

import (
	"strings"

	"github.com/crashsig/crashsig/signature/internal/cxxname"
	"github.com/crashsig/crashsig/symbolize"
)

// This file is the kind prefix of a key: signal, CHECK/ASSERT expression,
// terminate type, sanitizer bug, JVM, thread dump, termination.

// kind returns the kind prefix of a crash.
func (g *Generator) kind(c *symbolize.Crash, t *tracer) string {
	sig := signalName(c.Signal)
	var k string
	switch c.Kind {
	case symbolize.KindCheck:
		expr := checkExpr(c.CheckExpr, c.Message)
		if expr != "" {
			k = "CHECK(" + expr + ")"
		} else {
			k = "FATAL"
		}
	case symbolize.KindTerminate:
		if c.ExceptionType != "" {
			k = "terminate(" + g.Normalize(c.ExceptionType) + ")"
		} else {
			k = "terminate"
		}
	case symbolize.KindSanitizer:
		k = sanitizerTool(c) + "(" + bounded(strings.TrimSpace(c.SanitizerBug), 64) + ")"
		if c.SanitizerBug == "" {
			k = sanitizerTool(c)
		}
	case symbolize.KindLeak:
		k = "LEAK"
	case symbolize.KindJVM:
		if sig == "" {
			sig = "error"
		}
		k = "JVM(" + sig + ")"
	case symbolize.KindAssert:
		if expr := assertExpr(c); expr != "" {
			k = "ASSERT(" + expr + ")"
		} else if sig != "" {
			k = sig
		} else {
			k = "ABORT"
		}
	case symbolize.KindTermination:
		if sig == "" {
			sig = "SIGTERM"
		}
		k = "TERM(" + sig + ")"
	case symbolize.KindThreadDump:
		k = "THREADS"
	default:
		k = sig
		if k == "" {
			k = "CRASH"
		}
	}
	k = printable(k) // bytes of a streamed message that are not text
	t.add("kind: " + k + " (incident kind " + kindName(c.Kind) + ", signal " + orDash(c.Signal) + ")")
	if nullFault(c) {
		// gdb's bt and boost dumps of older Doris versions do not print the
		// fault address: null-ness is an attribute, never part of the key.
		t.add("attribute fault=null (fault address " + c.FaultAddress.String() + " < 4096; not in the key: not every source prints it)")
	}
	return k
}

// nullFault reports a SIGSEGV whose printed fault address lies in the
// null page.
func nullFault(c *symbolize.Crash) bool {
	return signalName(c.Signal) == "SIGSEGV" && c.HasFaultAddress && c.FaultAddress < nullPage &&
		c.Kind != symbolize.KindTermination
}

// assertExpr is the expression of a C assert() failure: CheckExpr, else
// the text between "Assertion `" and "' failed" in the message.
func assertExpr(c *symbolize.Crash) string {
	if c.CheckExpr != "" {
		return checkExpr(c.CheckExpr, "")
	}
	m := c.Message
	i := strings.Index(m, "Assertion `")
	if i < 0 {
		return ""
	}
	m = m[i+len("Assertion `"):]
	j := strings.Index(m, "' failed")
	if j < 0 {
		return ""
	}
	return bounded(strings.Join(strings.Fields(m[:j]), " "), maxKindExpr)
}

func kindName(k symbolize.Kind) string {
	if k == "" {
		return "unknown"
	}
	return string(k)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var signalNumbers = map[string]string{
	"4": "SIGILL", "6": "SIGABRT", "7": "SIGBUS", "8": "SIGFPE", "11": "SIGSEGV",
	"5": "SIGTRAP", "15": "SIGTERM", "2": "SIGINT", "9": "SIGKILL", "3": "SIGQUIT", "31": "SIGSYS",
}

// signalName turns `SIGSEGV`, `Signal 11`, `11`, `sigsegv` into SIGSEGV.
func signalName(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	u := strings.TrimPrefix(strings.ToUpper(s), "SIGNAL ")
	if strings.HasPrefix(u, "SIG") {
		if i := strings.IndexAny(u, " ("); i > 0 {
			u = u[:i]
		}
		return u
	}
	if n, ok := signalNumbers[u]; ok {
		return n
	}
	return "SIGNAL(" + bounded(u, 16) + ")"
}

func sanitizerTool(c *symbolize.Crash) string {
	m := c.Message
	switch {
	case strings.Contains(m, "ThreadSanitizer"):
		return "TSAN"
	case strings.Contains(m, "UndefinedBehaviorSanitizer") || strings.Contains(m, "runtime error"):
		return "UBSAN"
	case strings.Contains(m, "MemorySanitizer"):
		return "MSAN"
	case strings.Contains(m, "LeakSanitizer"):
		return "LSAN"
	}
	return "ASAN"
}

// checkExpr returns the normalized expression of a check failure: without
// the `Check failed:` prefix, the printed values `(1 vs. 2)`, a message
// after it, and with whitespace collapsed.
func checkExpr(expr, message string) string {
	if expr == "" {
		m := message
		i := strings.Index(m, "Check failed: ")
		if i < 0 {
			return ""
		}
		expr = m[i+len("Check failed: "):]
	}
	expr = strings.TrimPrefix(strings.TrimSpace(expr), "Check failed: ")
	expr = cutExpr(bounded(expr, 4096))
	expr = strings.Join(strings.Fields(expr), " ")
	expr = strings.TrimSuffix(expr, ".")
	return bounded(expr, maxKindExpr)
}

// cutExpr returns the leading C++ expression of a check message. glog
// prints `CHECK(cond) << msg` as `cond msg` and CHECK_EQ as
// `a == b (1 vs. 2)`; the expression ends where an operand follows an
// operand (`"Orphan" If you…`, `false bthread_… is called`), at a
// top-level comma, or at a parenthesis after a blank (the values).
func cutExpr(e string) string {
	i, lastEnd := 0, 0
	expectOperand := true
	for i < len(e) {
		c := e[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == ',' || c == ';':
			return strings.TrimSpace(e[:lastEnd])
		case c == '(' || c == '[':
			if !expectOperand && i > 0 && e[i-1] == ' ' && c == '(' {
				return strings.TrimSpace(e[:lastEnd])
			}
			closer := byte(')')
			if c == '[' {
				closer = ']'
			}
			end, ok := cxxname.SkipBalanced(e, i, c, closer)
			if !ok {
				if lastEnd == 0 {
					return strings.TrimSpace(e)
				}
				return strings.TrimSpace(e[:lastEnd])
			}
			i, lastEnd, expectOperand = end, end, false
		case c == '"' || c == '\'':
			if !expectOperand {
				return strings.TrimSpace(e[:lastEnd])
			}
			j := i + 1
			for j < len(e) && e[j] != c {
				if e[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(e) {
				return strings.TrimSpace(e)
			}
			i, lastEnd, expectOperand = j+1, j+1, false
		case cxxname.IsIdent(c):
			if !expectOperand {
				return strings.TrimSpace(e[:lastEnd])
			}
			j := i
			for j < len(e) && (cxxname.IsIdent(e[j]) || e[j] == ':' && j+1 < len(e) && e[j+1] == ':' || e[j] == ':' && j > 0 && e[j-1] == ':') {
				j++
			}
			i, lastEnd, expectOperand = j, j, false
		case strings.IndexByte("=!<>&|+-*/%^~?:.", c) >= 0:
			j := i
			for j < len(e) && strings.IndexByte("=!<>&|+-*/%^~?:.", e[j]) >= 0 {
				j++
			}
			op := e[i:j]
			if !(op == "++" || op == "--") || expectOperand {
				expectOperand = true
			}
			i = j
		default:
			if lastEnd == 0 {
				return strings.TrimSpace(e)
			}
			return strings.TrimSpace(e[:lastEnd])
		}
	}
	if expectOperand { // ends in an operator: keep the whole text
		return strings.TrimSpace(e)
	}
	return strings.TrimSpace(e[:lastEnd])
}
