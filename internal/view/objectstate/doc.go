// Package objectstate says in one word where a toolkit object stands
// (ready, failing, stalled, reconciling, suspended, unknown) and in one
// Summary what the UI shows of it: the shapes and the rule the UI's
// overview, graph and object page share (the UI's contract, issue 18),
// kept apart from objectview so that fleetview need not import it. Live
// is the kstatus word for any other object.
package objectstate
