// Package healthwatch lets a controller give its worker back while the
// objects it applied roll out. A Watcher keeps one shared, lazily started
// watch per kind being waited for (a controller-runtime cache that stores a
// status view of each object: identity, generation, labels, the status and
// the few spec fields kstatus reads), remembers which owner waits for which
// object, and when one of them changes it queues its owners through a
// controller-runtime source. The owner then looks again with ssa.Check
// through the Watcher's cache, which costs no request to the API server;
// a kind whose check reads more than the view (a CEL expression) is read
// from the API server.
//
// Secrets are watched by their metadata only: the cache never holds a
// credential. Each view also carries the object's applied digest
// (ssa.AppliedDigest, computed from the managed fields the view drops),
// and Live tells it with the uid and resourceVersion: an ssa.LiveReader,
// with which Apply counts an object its Memo knows unchanged without any
// request.
//
// A kind the cache cannot watch (its definition does not exist yet, or
// listing it is forbidden) is read from the API server instead, and Track
// reports that the owner must also poll.
package healthwatch
