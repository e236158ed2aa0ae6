package lazylog

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	uzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// logAll writes through l as a reconcile's logger does, from the same
// lines whichever logger it is given (the caller field names them).
func logAll(l logr.Logger) {
	l = l.WithName("kustomization").WithValues("controller", "kustomization", "namespace", "ns")
	l.Info("starting")
	r := l.WithValues("name", "apps", "reconcileID", "1").WithName("sub").WithValues("k0", nil)
	r.V(1).Info("debug line", "k", "v")
	r.Info("info line", "k", 2)
	r.Error(errors.New("boom"), "failed", "k", "v")
	l.Info("after", "x", 1)
}

// TestWrapWritesWhatTheLoggerWrites compares the lines of a zap logger
// (the controllers' own, with the caller added) with those of its wrapper.
func TestWrapWritesWhatTheLoggerWrites(t *testing.T) {
	for _, level := range []zapcore.Level{zapcore.InfoLevel, zapcore.DebugLevel, zapcore.ErrorLevel} {
		newZap := func(buf *bytes.Buffer) logr.Logger {
			return zap.New(zap.WriteTo(buf), zap.Level(level), zap.RawZapOpts(uzap.AddCaller()),
				zap.JSONEncoder(func(c *zapcore.EncoderConfig) { c.TimeKey = "" }))
		}
		var direct, wrapped bytes.Buffer
		for _, l := range []logr.Logger{newZap(&direct), Wrap(newZap(&wrapped))} {
			logAll(l) // one line: the stack traces name it
		}
		if direct.String() != wrapped.String() {
			t.Errorf("level %s: wrapped lines\n%s\nwant\n%s", level, wrapped.String(), direct.String())
		}
		if !strings.Contains(direct.String(), "lazylog_test.go") {
			t.Errorf("level %s: no caller in\n%s", level, direct.String())
		}
	}
}

// countingSink counts the WithValues and WithName calls that reach it
// and the lines it writes; only level 0 is enabled.
type countingSink struct {
	with, lines *int
	values      []any
}

func (c countingSink) Init(logr.RuntimeInfo)  {}
func (c countingSink) Enabled(level int) bool { return level == 0 }
func (c countingSink) Info(int, string, ...any) {
	*c.lines++
}
func (c countingSink) Error(error, string, ...any) { *c.lines++ }
func (c countingSink) WithValues(kv ...any) logr.LogSink {
	*c.with++
	c.values = append(append([]any{}, c.values...), kv...)
	return c
}
func (c countingSink) WithName(string) logr.LogSink { *c.with++; return c }

func TestWrapAppliesNothingUntilALineIsWritten(t *testing.T) {
	var with, lines int
	l := Wrap(logr.New(countingSink{with: &with, lines: &lines}))
	r := l.WithName("kustomization").WithValues("a", 1).WithValues("b", 2)
	r.V(1).Info("not enabled")
	if with != 0 || lines != 0 {
		t.Fatalf("before a line: %d With calls, %d lines; want 0, 0", with, lines)
	}
	r.Info("one")
	r.Info("two")
	if with != 3 || lines != 2 {
		t.Errorf("after two lines: %d With calls, %d lines; want 3 (applied once), 2", with, lines)
	}
	r.Error(errors.New("x"), "three")
	if with != 3 || lines != 3 {
		t.Errorf("after an error: %d With calls, %d lines; want 3, 3", with, lines)
	}
}
