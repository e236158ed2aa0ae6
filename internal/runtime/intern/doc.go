// Package intern keeps one copy of the strings that many cached objects
// repeat: a fleet of 10,000 Kustomizations decoded from their watch holds
// 10,000 copies of "Ready", "True", "ReconciliationSucceeded", its
// namespace, its source's name and the revision's message, each a small
// allocation of its own. Strings are immutable, so sharing one copy
// changes nothing a reader can see; a cache transform (internal/app)
// passes each object through here before it is stored.
package intern
