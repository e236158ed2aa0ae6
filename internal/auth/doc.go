// Package auth owns cloud identity: whose credentials a call to a cloud
// uses and how long they are kept. It is the floor the cloud packages
// (auth/aws, auth/gcp, auth/azure, auth/githubapp) and their consumers
// (registries, buckets, KMS, Git hosts, remote clusters) share:
//
//   - Identity: the controller's own (its Pod's environment: IRSA, EKS Pod
//     Identity, GKE metadata server, Azure workload identity) or an
//     object's ServiceAccount (object-level workload identity).
//   - Settings: the controller's flags and gates that decide an object's
//     Identity (the ObjectLevelWorkloadIdentity gate, the lockdown default
//     ServiceAccount) and the client that reads ServiceAccounts and asks
//     the API server for their tokens (TokenRequest).
//   - Cache: exchanged tokens kept until shortly before they expire, at most
//     --token-cache-max-size of them and never longer than
//     --token-cache-max-duration, with one exchange in flight per key.
//
// A Token's Value is a secret: nothing here puts it in an error, a log line
// or a String method.
package auth
