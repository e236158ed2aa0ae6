// Package azurefake serves, on 127.0.0.1 over TLS, the Microsoft APIs
// weir's Azure identity talks to, as Microsoft documents them:
//
//   - Entra ID (the authority host): instance discovery
//     (/common/discovery/instance), the tenant's OpenID configuration
//     (/TENANT/v2.0/.well-known/openid-configuration), which azidentity's
//     MSAL reads before anything else, and the token endpoint
//     (POST /TENANT/oauth2/v2.0/token) for the client credentials grant
//     with a client assertion that is a Kubernetes ServiceAccount token
//     for api://AzureADTokenExchange (workload identity), with a client
//     secret registered by AddClientSecret, or with an assertion signed by
//     a certificate registered by AddClientCertificate (PS256, naming it by
//     x5t#S256, audience the token endpoint, as MSAL sends it);
//   - the App Service managed identity endpoint (GET /msi/token with
//     X-IDENTITY-HEADER), the one managed identity source azidentity lets
//     an environment variable (IDENTITY_ENDPOINT) move;
//   - ACR's token exchange (POST /oauth2/exchange, on the registry's
//     host): an Entra access token for Azure Resource Manager for a
//     refresh token, a JWT carrying its expiry, as ACR answers;
//   - Azure Resource Manager (management.azure.com): managedClusters GET
//     (aadProfile unless the cluster has local accounts only) and POST
//     …/listClusterUserCredential (one kubeconfig per address) for an ARM
//     token, of the clusters AddCluster made.
//
// Client returns an *http.Client that trusts the fake's certificate
// (issued for 127.0.0.1, login.microsoftonline.com, management.azure.com and the ACR domains)
// and dials every named host to the fake, so a registry such as
// weir.azurecr.io is answered here and nothing leaves the machine.
//
// Every request is recorded with its client assertion decoded (sub, aud)
// and its tokens left out. Tokens are derived from the identity they
// stand for (AccessToken, RefreshToken), so a test can start a registry
// that accepts exactly one identity's login.
package azurefake
