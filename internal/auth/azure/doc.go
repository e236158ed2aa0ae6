// Package azure owns Azure identity: the Entra ID access token a call to
// Azure presents, for the controller's identity or an object's
// ServiceAccount, and the ACR login made of it.
//
//   - The controller's identity is azidentity's environment credential,
//     workload identity (AZURE_CLIENT_ID, AZURE_TENANT_ID,
//     AZURE_FEDERATED_TOKEN_FILE, AZURE_AUTHORITY_HOST), or managed
//     identity, tried in that order as Flux does (never the Azure CLI).
//   - An object's ServiceAccount, annotated with
//     azure.workload.identity/tenant-id and azure.workload.identity/client-id,
//     gets a Kubernetes token for api://AzureADTokenExchange, which the
//     Entra token endpoint takes as the client assertion of that
//     application.
//   - ACR (*.azurecr.io, .cn, .de, .us) exchanges an access token for the
//     registry's cloud's Resource Manager at https://REGISTRY/oauth2/exchange
//     for a refresh token, the password of
//     00000000-0000-0000-0000-000000000000.
//   - A remote AKS cluster (Entra ID integration on) takes a token for
//     ScopeAKS; DescribeCluster reads the managed cluster and its user
//     kubeconfigs (addresses, CA) from Azure Resource Manager.
//
// Tokens go through auth.Cache under a key naming the cloud, the identity,
// the annotations and the scope or registry.
package azure
