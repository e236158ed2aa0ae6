// Package gcpfake serves, on 127.0.0.1, the Google APIs weir's GCP
// identity talks to, as Google documents them:
//
//   - the GKE metadata server (/computeMetadata/v1/...): the node's
//     project, cluster location and name, and the access token of the
//     Pod's service account; it refuses a request without
//     "Metadata-Flavor: Google" (403), as the real one does;
//   - Google STS (POST /v1/token): an RFC 8693 token exchange of a
//     Kubernetes ServiceAccount token (subject_token_type jwt) for a
//     federated access token, checking the grant type, the audience (the
//     GKE identity namespace or a workload identity provider) and that the
//     subject token was issued for that audience;
//   - IAM Credentials (POST /v1/projects/-/serviceAccounts/EMAIL:generateAccessToken):
//     impersonation of a Google service account with a federated token;
//   - the GKE API (GET /v1/projects/P/locations/L/clusters/C): the endpoint
//     and CA of the clusters AddCluster made, for a token the fake issued;
//   - Pub/Sub's publisher (StartPubSub, a server of its own): the
//     google.pubsub.v1 Publisher.Publish RPC over TLS, as Google's Go
//     client calls it, checking the bearer token and the topic and
//     recording each call's messages (data and attributes).
//
// Every request is recorded with its subject token decoded (sub, aud) and
// its credentials left out, so tests assert what was sent. Access tokens
// are derived from the identity they stand for (ControllerToken,
// FederatedToken, ImpersonatedToken), so a test can start a registry that
// accepts exactly one identity's token.
package gcpfake
