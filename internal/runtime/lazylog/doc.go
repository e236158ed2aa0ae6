// Package lazylog wraps a logr.LogSink so that the names and key/value
// pairs a logger gains cost nothing until it writes a line.
//
// controller-runtime gives every reconcile a logger of its own (the
// controller, the object's kind, namespace and name, a reconcile ID):
// with zap, each WithValues copies the encoder and encodes the values at
// once, a tenth of the CPU of a reconcile that changes nothing. At the
// default levels such a reconcile writes no line, so the work is wasted;
// a Sink records the calls and replays them, in order, on the wrapped sink
// the first time its logger writes. One line differs: zap's complaint
// about an odd number of values comes when the logger first writes, not
// from the WithValues that passed them.
package lazylog
