// Package secretcache serves the event server's reads of Provider Secrets
// (secretRef, certSecretRef, proxySecretRef) without a request to the API
// server per event.
//
// Flux's notification-controller reads them uncached (its
// CacheSecretsAndConfigMaps gate is off by default), so that it holds no
// credentials beyond the ones in use; under a burst of events those reads
// queue behind --kube-api-qps and deliveries time out. The cache keeps
// that property and removes the reads: a metadata-only watch of Secrets
// (names and resourceVersions, never data) says which version of each
// Secret is current, and a Secret's data is read from the API server the
// first time a Provider asks for it and again only when the watch reports
// a new resourceVersion. Data is held only for the Secrets Providers
// name, and dropped when the Secret changes or is deleted.
//
// A changed Secret takes effect with the first event after the watch has
// delivered the change (milliseconds), as an edited Provider or Alert does
// through the manager's cache. Until the watch has synced, and for a
// Secret the watch has not seen (just created, or missing), every read
// goes to the API server.
package secretcache
