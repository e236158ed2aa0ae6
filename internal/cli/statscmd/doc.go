// Package statscmd implements `weir stats`: for each Flux kind, how many
// objects there are, how many run, fail and are suspended, and the storage
// their artifacts take, in the flux CLI's table.
package statscmd
