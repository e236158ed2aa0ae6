// Package restconfig resolves the identity and the cluster an applier acts
// with, as Flux's spec.serviceAccountName and spec.kubeConfig say, into a
// *rest.Config: the controller's own cluster, impersonating the service
// account (or --default-service-account); a remote cluster from a
// kubeconfig Secret, refused unless it is self-contained and passes the
// --insecure-kubeconfig-exec and --insecure-kubeconfig-tls lockdown; or a
// remote cluster from a kubeConfig.configMapRef ConfigMap, reached with a
// bearer token kept in an auth.Cache and set on every request: provider
// generic, a ServiceAccount token of this cluster that the remote
// cluster's OIDC trust accepts; aws, gcp and azure, the cloud's token for
// EKS (a presigned STS GetCallerIdentity), GKE (an access token) or AKS
// (an Entra token for AKS's scope), of the controller's identity or the
// ConfigMap's serviceAccountName, with the address and CA the ConfigMap
// gives or the cloud's cluster resource describes (cloud.go).
//
// The Kustomization builds controller-runtime clients from it, the
// HelmRelease Helm's RESTClientGetter: one resolution, so both kinds apply
// the same rules with the same messages.
package restconfig
