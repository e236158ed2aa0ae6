// Package exportcmd implements `weir export`: print objects as YAML that
// can be applied again, as `flux export` does: only apiVersion, kind, the
// object's name, namespace, labels and annotations, and its spec; no status
// and nothing the server manages (uid, resourceVersion, generation,
// creationTimestamp, managedFields) nor kubectl's last-applied annotation.
// Documents are separated by ---.
package exportcmd
