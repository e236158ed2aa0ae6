// Package vault owns the HashiCorp Vault / OpenBao login of Kubernetes
// workload identity: the token SOPS's transit calls carry when the
// decryption Secret holds no sops.vault-token, for the controller's own
// ServiceAccount or a Kustomization's spec.decryption.serviceAccountName
// (Flux 2.9, kustomize-controller's --sops-vault-configmap).
//
//   - Config is the ConfigMap --sops-vault-configmap names, in the
//     controller's namespace: its config.yaml lists the instances the
//     controller may log in to, each an address and the loginPath of a
//     JWT-backed auth method mounted there (the Kubernetes auth method,
//     auth/kubernetes/login, or the JWT auth method, auth/jwt/login). The
//     path is used as written, so a custom mount or a Vault Enterprise
//     namespace prefix goes into it. An address not listed gets no login:
//     the list is what the operator trusts with the cluster's tokens.
//   - Login asks the API server for a token of the ServiceAccount (the
//     TokenRequest of internal/auth) bound to the audience of the
//     instance's address, and writes it to <address>/v1/<loginPath> as
//     {"role": "<namespace>_<name>", "jwt": "..."}: the role is the
//     ServiceAccount's namespace and name joined by an underscore, Flux's
//     convention, so a Vault role binds one ServiceAccount and one
//     audience. The answer's auth.client_token is the transit token, kept
//     in auth.Cache for its lease_duration (four fifths of it, as every
//     token there) under a key naming the address, the login path and
//     the identity.
//
// The login goes through hashicorp/vault/api's client configured as SOPS
// configures its transit client (DefaultConfig): the TLS settings of the
// controller's environment (VAULT_CACERT, VAULT_CAPATH, VAULT_CLIENT_CERT,
// VAULT_CLIENT_KEY, VAULT_SKIP_VERIFY, VAULT_TLS_SERVER_NAME) apply to
// both alike. Forget drops a token transit refused, so the next Login
// logs in anew.
//
// Vault's own messages ({"errors": [...]}) are quoted in errors; the
// ServiceAccount token and the client token never are.
package vault
