package lazylog

import (
	"slices"
	"sync"

	"github.com/go-logr/logr"
)

// Wrap returns l whose names and values are applied lazily. Enabled asks
// l's sink: a sink whose verbosity depends on the logger's names or values
// (zap's does not) would answer as l does.
func Wrap(l logr.Logger) logr.Logger {
	if l.GetSink() == nil {
		return l
	}
	// The wrapper is one more frame between the caller and l's sink.
	return logr.New(&sink{base: withCallDepth(l.GetSink(), 1)}).V(l.GetV())
}

// sink is base with ops applied, once, when a line is written.
type sink struct {
	base logr.LogSink
	ops  []op // never changed once set: derived sinks copy

	once sync.Once
	full logr.LogSink
}

// op is a WithName (name set) or a WithValues (values).
type op struct {
	name   string
	values []any
}

var (
	_ logr.LogSink          = (*sink)(nil)
	_ logr.CallDepthLogSink = (*sink)(nil)
)

// applied is base with every recorded op applied.
func (s *sink) applied() logr.LogSink {
	s.once.Do(func() {
		full := s.base
		for _, o := range s.ops {
			if o.values != nil {
				full = full.WithValues(o.values...)
			} else {
				full = full.WithName(o.name)
			}
		}
		s.full = full
	})
	return s.full
}

func (s *sink) with(o op) logr.LogSink {
	return &sink{base: s.base, ops: append(slices.Clip(s.ops), o)}
}

// Init implements logr.LogSink. The base was initialised by the logr.New
// of the logger Wrap was given; the one frame the wrapper adds is in base.
func (s *sink) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink.
func (s *sink) Enabled(level int) bool { return s.base.Enabled(level) }

// Info implements logr.LogSink.
func (s *sink) Info(level int, msg string, keysAndValues ...any) {
	s.applied().Info(level, msg, keysAndValues...)
}

// Error implements logr.LogSink.
func (s *sink) Error(err error, msg string, keysAndValues ...any) {
	s.applied().Error(err, msg, keysAndValues...)
}

// WithValues implements logr.LogSink.
func (s *sink) WithValues(keysAndValues ...any) logr.LogSink {
	if len(keysAndValues) == 0 {
		return s
	}
	return s.with(op{values: slices.Clone(keysAndValues)})
}

// WithName implements logr.LogSink.
func (s *sink) WithName(name string) logr.LogSink { return s.with(op{name: name}) }

// WithCallDepth implements logr.CallDepthLogSink.
func (s *sink) WithCallDepth(depth int) logr.LogSink {
	return &sink{base: withCallDepth(s.base, depth), ops: s.ops}
}

func withCallDepth(base logr.LogSink, depth int) logr.LogSink {
	if d, ok := base.(logr.CallDepthLogSink); ok {
		return d.WithCallDepth(depth)
	}
	return base
}
