// Package migratecmd implements `weir migrate`, run before a Flux minor
// upgrade. In cluster mode it rewrites every object of each Flux CRD so
// that etcd holds it in the CRD's storage version (managed fields
// included), then trims the CRD's status.storedVersions to that version,
// so a later CRD that stops serving an old version cannot strand objects.
// In file mode (-f) it moves the apiVersion lines of Flux kinds in a
// repository's manifests to the latest versions, touching nothing else in
// the files: comments, ordering and formatting stay byte for byte.
package migratecmd
