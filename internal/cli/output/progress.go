package output

import (
	"fmt"
	"io"
)

// Progress writes the lines a person follows while a command works. They go
// to stderr so that stdout carries only data a script can consume.
type Progress struct{ W io.Writer }

// Generatef reports something generated locally (✚): an object, a key.
func (p Progress) Generatef(format string, args ...any) { p.line("✚", format, args...) }

// Actionf reports an action being taken (►).
func (p Progress) Actionf(format string, args ...any) { p.line("►", format, args...) }

// Waitingf reports a wait for the cluster (◎).
func (p Progress) Waitingf(format string, args ...any) { p.line("◎", format, args...) }

// Successf reports a step done (✔).
func (p Progress) Successf(format string, args ...any) { p.line("✔", format, args...) }

// Failuref reports a step that failed (✗).
func (p Progress) Failuref(format string, args ...any) { p.line("✗", format, args...) }

// Warningf reports something the user should know (⚠).
func (p Progress) Warningf(format string, args ...any) { p.line("⚠", format, args...) }

func (p Progress) line(glyph, format string, args ...any) {
	fmt.Fprintf(p.W, "%s %s\n", glyph, fmt.Sprintf(format, args...))
}

// ExitError is an error with the exit code it stands for. cli.Execute prints
// its message (when not empty) and exits with Code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode returns the process exit code.
func (e *ExitError) ExitCode() int { return e.Code }

// Reported is the error of a command that has already printed why it failed
// with Failuref: the process exits 1 and nothing more is printed.
var Reported = &ExitError{Code: 1}
