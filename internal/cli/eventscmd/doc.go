// Package eventscmd implements `weir events`: the Kubernetes Events of Flux
// objects, oldest first, as `flux events` shows them; with --for Kind/name,
// the events of the object's source too.
package eventscmd
