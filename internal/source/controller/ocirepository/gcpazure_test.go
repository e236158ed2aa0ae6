package ocirepository

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

// cloudRepo is an OCIRepository of provider for host/org/app, pulled
// through a proxy that sends the cloud's host to a local registry that
// accepts only user/password, as the ServiceAccount sa. The proxy tunnels
// CONNECTs (the token exchanges over TLS, which go through it too) to
// tunnel when it is set.
func cloudRepo(t *testing.T, env *testenv.Env, ns, name, provider, host, tunnel, sa, user, password string) (*sourcev1.OCIRepository, string, *awsfake.Proxy) {
	t.Helper()
	reg := ociregistry.New(t, ociregistry.Options{Username: user, Password: password})
	digest := reg.PushArtifact(t, "org/app", "latest", ociregistry.Artifact{Files: map[string]string{name + ".yaml": name + "\n"}})
	proxy := awsfake.NewProxy(t, awsfake.ProxyOptions{Registry: reg.URL(), Tunnel: tunnel})
	create(t, env, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-proxy", Namespace: ns},
		StringData: map[string]string{"address": proxy.URL}})
	obj := newRepo(ns, name, "oci://"+host+"/org/app", nil)
	obj.Spec.Provider = provider
	obj.Spec.ServiceAccountName = sa
	obj.Spec.Insecure = true
	obj.Spec.ProxySecretRef = &meta.LocalObjectReference{Name: name + "-proxy"}
	return obj, "latest@" + digest, proxy
}

// useGCPFake starts a GCP fake and points the metadata client and
// gcp.Default, which the controller uses, at it until the test ends.
func useGCPFake(t *testing.T) *gcpfake.Server {
	fake := gcpfake.Start(t, gcpfake.Options{})
	fake.Setenv(t)
	sts, iam := gcp.Default.STSURL, gcp.Default.IAMCredentialsURL
	gcp.Default.STSURL, gcp.Default.IAMCredentialsURL = fake.URL+"/v1/token", fake.URL
	t.Cleanup(func() { gcp.Default.STSURL, gcp.Default.IAMCredentialsURL = sts, iam })
	return fake
}

// TestProviderGCP pulls from Artifact Registry as two ServiceAccounts, each
// impersonating its own Google service account: two STS exchanges with
// two subjects, then none on a second reconcile (the token cache).
func TestProviderGCP(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := useGCPFake(t)

	const host = "europe-west1-docker.pkg.dev"
	emails := map[string]string{"tenant-a": "tenant-a@weir-project.iam.gserviceaccount.com", "tenant-b": "tenant-b@weir-project.iam.gserviceaccount.com"}
	var objs []*sourcev1.OCIRepository
	var revisions []string
	for _, sa := range []string{"tenant-a", "tenant-b"} {
		create(t, env, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns,
			Annotations: map[string]string{gcp.ServiceAccountAnnotation: emails[sa]}}})
		obj, rev, _ := cloudRepo(t, env, ns, sa, gcp.ProviderName, host, "", sa, gcp.RegistryUsername, gcpfake.ImpersonatedToken(emails[sa]))
		create(t, env, obj)
		objs, revisions = append(objs, obj), append(revisions, rev)
	}
	for i, obj := range objs {
		waitReady(t, env, obj, revisions[i])
	}
	subjects := map[string]bool{}
	for _, r := range fake.Requests() {
		if r.Path == "/v1/token" && r.Subject != nil {
			subjects[r.Subject.Subject] = r.Subject.HasAudience(fake.WorkloadIdentityPool())
		}
	}
	for _, sa := range []string{"tenant-a", "tenant-b"} {
		if !subjects[satoken.ServiceAccount(ns, sa)] {
			t.Errorf("no STS exchange of %s's token for the pool: %v", sa, subjects)
		}
	}
	exchanges := fake.Count("/v1/")
	for _, obj := range objs {
		env.RequestReconcile(t, obj)
		env.WaitHandled(t, obj)
	}
	if n := fake.Count("/v1/"); n != exchanges {
		t.Errorf("a second reconcile made %d more exchanges, want none (cached)", n-exchanges)
	}
}

// TestProviderAzure pulls from ACR as two ServiceAccounts (two Entra
// applications): two client assertions, two ACR exchanges, then none on a
// second reconcile.
func TestProviderAzure(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := azurefake.Start(t)
	fake.SetenvAuthority(t)
	saved := azure.Default.HTTPClient
	azure.Default.HTTPClient = fake.Client()
	t.Cleanup(func() { azure.Default.HTTPClient = saved })

	const host, tenant = "weir.azurecr.io", "72f988bf-86f1-41af-91ab-2d7cd011db47"
	clients := map[string]string{"tenant-a": "11111111-1111-1111-1111-111111111111", "tenant-b": "22222222-2222-2222-2222-222222222222"}
	var objs []*sourcev1.OCIRepository
	var revisions []string
	var proxies []*awsfake.Proxy
	for _, sa := range []string{"tenant-a", "tenant-b"} {
		create(t, env, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns,
			Annotations: map[string]string{azure.TenantIDAnnotation: tenant, azure.ClientIDAnnotation: clients[sa]}}})
		obj, rev, proxy := cloudRepo(t, env, ns, sa, azure.ProviderName, host, fake.Addr(), sa, azure.RegistryUsername, fake.RefreshToken(clients[sa], host))
		create(t, env, obj)
		objs, revisions, proxies = append(objs, obj), append(revisions, rev), append(proxies, proxy)
	}
	for i, obj := range objs {
		waitReady(t, env, obj, revisions[i])
		// Entra ID (the authority host is the fake's address) was reached
		// through the object's proxy.
		if seen := proxies[i].Seen(); !slices.Contains(seen, "CONNECT "+fake.Addr()) {
			t.Errorf("%s: through the proxy %q, want the Entra ID call (CONNECT %s)", obj.Name, seen, fake.Addr())
		}
	}
	assertions := map[string]string{}
	for _, r := range fake.Requests() {
		if r.Assertion != nil && r.Assertion.HasAudience(azure.TokenExchangeAudience) {
			assertions[r.Form.Get("client_id")] = r.Assertion.Subject
		}
	}
	for sa, client := range clients {
		if assertions[client] != satoken.ServiceAccount(ns, sa) {
			t.Errorf("client %s was asserted by %q, want %s's token", client, assertions[client], sa)
		}
	}
	if n := fake.Count("/oauth2/exchange"); n != 2 {
		t.Errorf("%d ACR exchanges, want 2", n)
	}
	for _, obj := range objs {
		env.RequestReconcile(t, obj)
		env.WaitHandled(t, obj)
	}
	if n := fake.Count("/oauth2/exchange") + fake.Count("/oauth2/v2.0/token"); n != 4 {
		t.Errorf("after a second reconcile %d exchanges, want 4 (cached)", n)
	}
}

// TestProviderGCPAndAzureRefusals: a host of another cloud, an Azure
// ServiceAccount without its tenant, and a Google service account IAM
// refuses to impersonate are AuthenticationFailed with Flux's messages,
// naming the cloud call and no token.
func TestProviderGCPAndAzureRefusals(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := useGCPFake(t)
	const denied = "denied@weir-project.iam.gserviceaccount.com"
	fake.Deny(denied)
	create(t, env,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "no-tenant", Namespace: ns,
			Annotations: map[string]string{azure.ClientIDAnnotation: "11111111-1111-1111-1111-111111111111"}}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "denied", Namespace: ns,
			Annotations: map[string]string{gcp.ServiceAccountAnnotation: denied}}})
	cases := []struct{ name, provider, url, sa, want string }{
		{"wrong-host", gcp.ProviderName, "oci://weir.azurecr.io/org/app", "", "failed to get credential from gcp: invalid GCP registry: 'weir.azurecr.io'. must match"},
		{"no-tenant", azure.ProviderName, "oci://weir.azurecr.io/org/app", "no-tenant",
			"failed to get credential from azure: failed to get provider identity from service account '" + ns + "/no-tenant' annotations: azure tenant ID is not set in the service account annotation azure.workload.identity/tenant-id"},
		{"denied", gcp.ProviderName, "oci://gcr.io/org/app", "denied",
			"failed to get credential from gcp: failed to create access token for serviceaccount/" + ns + "/denied (Google STS, then IAM Credentials generateAccessToken for " + denied + "): "},
	}
	for _, c := range cases {
		obj := newRepo(ns, c.name, c.url, nil)
		obj.Spec.Provider, obj.Spec.ServiceAccountName = c.provider, c.sa
		create(t, env, obj)
		ready := env.WaitForFailure(t, obj, sourcev1.AuthenticationFailedReason)
		if !strings.HasPrefix(ready.Message, c.want) || strings.Contains(ready.Message, "ya29.") {
			t.Errorf("%s: message %q, want prefix %q", c.name, ready.Message, c.want)
		}
	}
}
