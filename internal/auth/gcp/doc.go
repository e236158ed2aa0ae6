// Package gcp owns GCP identity: the access token a call to Google Cloud
// presents, for the controller's identity or an object's ServiceAccount,
// and the Artifact Registry / GCR login made of it.
//
//   - The controller's identity is Google's application default
//     credentials: on GKE, the metadata server's token for the Pod's
//     service account (GCE_METADATA_HOST points it elsewhere).
//   - An object's ServiceAccount gets a Kubernetes token for the workload
//     identity pool (GKE's <project>.svc.id.goog, read from the metadata
//     server) or, when the ServiceAccount is annotated with
//     gcp.auth.fluxcd.io/workload-identity-provider, for that provider;
//     Google STS exchanges it for a federated token, and when the
//     ServiceAccount is annotated with iam.gke.io/gcp-service-account
//     IAM Credentials' generateAccessToken impersonates that Google
//     service account with it.
//   - Registries (*-docker.pkg.dev, gcr.io, *.gcr.io) take the access token
//     as the password of "oauth2accesstoken".
//   - A remote GKE cluster takes the access token as its bearer token;
//     DescribeCluster reads its endpoint and CA with the GKE API's
//     projects.locations.clusters.get.
//
// Tokens go through auth.Cache under a key naming the cloud, the identity,
// the annotations and the scopes.
package gcp
