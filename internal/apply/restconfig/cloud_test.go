package restconfig

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/aws"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	testenv.Main(m, testenv.APIServerOnly)
}

// applyThrough resolves the ConfigMap access in ns and writes a ConfigMap
// named name through the remote cluster; the test's own client then reads
// it back from the real API server.
func applyThrough(t *testing.T, r *Resolver, env *testenv.Env, ns, name string) {
	t.Helper()
	ctx := context.Background()
	target, err := r.Resolve(ctx, Request{Namespace: ns, KubeConfig: &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "access"}}})
	if err != nil {
		t.Fatal(err)
	}
	if target.Config.BearerToken != "" {
		t.Fatal("the token must travel only in the transport")
	}
	remote, err := client.New(target.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"via": "remote"}}
	if err := remote.Create(ctx, cm); err != nil {
		t.Fatalf("create through the remote cluster: %v", err)
	}
	var got corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil || got.Data["via"] != "remote" {
		t.Fatalf("the real API server has %v, %v", got.Data, err)
	}
}

func accessConfigMap(ns string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "access"}, Data: data}
}

const eksARN = "arn:aws:eks:eu-west-1:123456789012:cluster/prod"

// TestEKSRemoteCluster reaches the real API server as an EKS cluster
// with an object's ServiceAccount: its TokenRequest (TokenReview'd by
// the fake STS) becomes a role session; DescribeCluster, signed for eks
// in the ARN's region, gives the address and CA; every request carries a
// k8s-aws-v1 token whose SigV4 signature over GetCallerIdentity and
// x-k8s-aws-id the proxy recomputes. A second resolve calls nothing in
// AWS; an address that is not the cluster's is refused.
func TestEKSRemoteCluster(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := awsfake.New(t)
	fake.Setenv(t)
	fake.ReviewWebIdentity = awsfake.TokenReview(env.Client, aws.Audience)
	api := testenv.StartRemoteAPI(t, env.Config, func(token string) (string, error) {
		id, err := fake.VerifyClusterToken(token)
		return id.Cluster + "@" + id.Region, err
	})
	fake.AddCluster("prod", awsfake.EKSCluster{Endpoint: api.URL, CA: []byte(api.CAPEM())})
	env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer",
		Annotations: map[string]string{aws.RoleARNAnnotation: "arn:aws:iam::123456789012:role/deployer"}}},
		accessConfigMap(ns, map[string]string{KeyProvider: ProviderAWS, KeyCluster: eksARN, KeyServiceAccountName: "deployer"}))
	r := &Resolver{Config: env.Config, Reader: env.Client,
		KubeConfigIdentity: &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}}

	applyThrough(t, r, env, ns, "first")
	applyThrough(t, r, env, ns, "second")

	accepted, refused := api.Accepted()
	if refused != 0 || len(accepted) < 2 || accepted[0] != "prod@eu-west-1" {
		t.Errorf("remote API accepted %q, refused %d", accepted, refused)
	}
	describes := fake.Requests("eks")
	if len(describes) != 1 || describes[0].Service != "eks" || describes[0].Region != "eu-west-1" || describes[0].SessionToken == "" {
		t.Errorf("DescribeCluster calls %+v, want one signed for eks in eu-west-1 with a session", describes)
	}
	var assumed []awsfake.Request
	for _, req := range fake.Requests("sts") {
		if req.Action == "AssumeRoleWithWebIdentity" {
			assumed = append(assumed, req)
		}
	}
	if len(assumed) != 1 || assumed[0].Subject != "system:serviceaccount:"+ns+":deployer" ||
		assumed[0].Form.Get("RoleSessionName") != "deployer."+ns+".eu-west-1.fluxcd.io" {
		t.Errorf("AssumeRoleWithWebIdentity calls %+v", assumed)
	}

	// An address the cluster does not have: refused before any request.
	env.Client.Delete(context.Background(), accessConfigMap(ns, nil)) //nolint:errcheck // recreated below
	env.Create(t, accessConfigMap(ns, map[string]string{KeyProvider: ProviderAWS, KeyCluster: eksARN,
		KeyServiceAccountName: "deployer", KeyAddress: "https://other.example.com"}))
	_, err := r.Resolve(context.Background(), Request{Namespace: ns, KubeConfig: &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "access"}}})
	want := "KubeConfig ConfigMap '" + ns + "/access': EKS endpoint '" + api.URL + "' does not match specified address: 'https://other.example.com'"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

const gkeCluster = "projects/weir-project/locations/europe-west1/clusters/prod"

// TestGKERemoteCluster is the controller's own GCP identity (the metadata
// server): clusters.get with its access token gives the address (an IP,
// here with a port) and CA, and the same token is the bearer the remote
// API accepts. The ConfigMap's address must be the cluster's.
func TestGKERemoteCluster(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := gcpfake.Start(t, gcpfake.Options{})
	fake.Setenv(t)
	api := testenv.StartRemoteAPI(t, env.Config, func(token string) (string, error) {
		if who := gcpfake.TokenIdentity(token); who != "" {
			return who, nil
		}
		return "", errors.New("not a GCP access token")
	})
	address := strings.TrimPrefix(api.URL, "https://")
	fake.AddCluster(gkeCluster, gcpfake.GKECluster{Endpoint: address, CA: []byte(api.CAPEM())})
	env.Create(t, accessConfigMap(ns, map[string]string{KeyProvider: ProviderGCP, KeyCluster: gkeCluster, KeyAddress: address}))
	r := &Resolver{Config: env.Config, Reader: env.Client, KubeConfigIdentity: &auth.Settings{Client: env.Client, Cache: auth.NewCache(10, time.Hour)},
		GCP: &gcp.Provider{STSURL: fake.URL + "/v1/token", IAMCredentialsURL: fake.URL, ContainerURL: fake.URL}}

	applyThrough(t, r, env, ns, "first")
	applyThrough(t, r, env, ns, "second")

	if accepted, refused := api.Accepted(); refused != 0 || len(accepted) < 2 || accepted[0] != "controller" {
		t.Errorf("remote API accepted %q, refused %d", accepted, refused)
	}
	var gets []gcpfake.Request
	for _, req := range fake.Requests() {
		if strings.HasPrefix(req.Path, "/v1/projects/weir-project/locations/") {
			gets = append(gets, req)
		}
	}
	if len(gets) != 1 || gets[0].Method != http.MethodGet || gets[0].Path != "/v1/"+gkeCluster || gets[0].Bearer != "controller" {
		t.Errorf("clusters.get calls %+v, want one for %s with the controller's token", gets, gkeCluster)
	}
}

const aksCluster = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod"

// TestAKSRemoteCluster is an object's ServiceAccount federated with an
// Entra application: an ARM token reads the managed cluster (Entra ID
// integration on) and its user kubeconfigs, the second of which is the
// ConfigMap's address; the remote API accepts only the application's
// token for AKS's scope. A cluster with local accounts only is refused.
func TestAKSRemoteCluster(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := azurefake.Start(t)
	fake.SetenvAuthority(t)
	const tenant, app = "72f988bf-86f1-41af-91ab-2d7cd011db47", "33333333-3333-3333-3333-333333333333"
	api := testenv.StartRemoteAPI(t, env.Config, func(token string) (string, error) {
		if client, scope, ok := azurefake.TokenScope(token); ok && scope == azure.ScopeAKS {
			return client, nil
		}
		return "", errors.New("not an Entra token for AKS")
	})
	fake.AddCluster(aksCluster, azurefake.AKSCluster{Servers: []string{"https://prod-dns.hcp.westeurope.azmk8s.io:443", api.URL}, CA: []byte(api.CAPEM())})
	fake.AddCluster(aksCluster+"-local", azurefake.AKSCluster{Servers: []string{api.URL}, CA: []byte(api.CAPEM()), LocalAccounts: true})
	env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer",
		Annotations: map[string]string{azure.TenantIDAnnotation: tenant, azure.ClientIDAnnotation: app}}},
		accessConfigMap(ns, map[string]string{KeyProvider: ProviderAzure, KeyCluster: aksCluster, KeyAddress: api.URL, KeyServiceAccountName: "deployer"}))
	r := &Resolver{Config: env.Config, Reader: env.Client,
		KubeConfigIdentity: &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)},
		Azure:              &azure.Provider{HTTPClient: fake.Client()}}

	applyThrough(t, r, env, ns, "first")
	applyThrough(t, r, env, ns, "second")

	if accepted, refused := api.Accepted(); refused != 0 || len(accepted) < 2 || accepted[0] != app {
		t.Errorf("remote API accepted %q, refused %d", accepted, refused)
	}
	var scopes, arm []string
	for _, req := range fake.Requests() {
		switch {
		case strings.HasSuffix(req.Path, "/oauth2/v2.0/token"):
			scopes = append(scopes, req.Form.Get("scope"))
			if req.Assertion == nil || req.Assertion.Subject != "system:serviceaccount:"+ns+":deployer" {
				t.Errorf("token request assertion %+v", req.Assertion)
			}
		case strings.HasPrefix(req.Path, "/subscriptions/"):
			arm = append(arm, req.Method+" "+req.Host+req.Path+"?api-version="+req.Query.Get("api-version")+" as "+req.AccessToken)
		}
	}
	if len(scopes) != 2 || !strings.Contains(scopes[0], azure.ScopeResourceManager) || !strings.Contains(scopes[1], azure.ScopeAKS) {
		t.Errorf("Entra token requests for scopes %q, want ARM's then AKS's, once each", scopes)
	}
	wantARM := []string{
		"GET management.azure.com" + aksCluster + "?api-version=" + azure.ManagedClustersAPIVersion + " as " + app + " for " + azure.ScopeResourceManager,
		"POST management.azure.com" + aksCluster + "/listClusterUserCredential?api-version=" + azure.ManagedClustersAPIVersion + " as " + app + " for " + azure.ScopeResourceManager,
	}
	if strings.Join(arm, "\n") != strings.Join(wantARM, "\n") {
		t.Errorf("ARM calls:\n%s\nwant:\n%s", strings.Join(arm, "\n"), strings.Join(wantARM, "\n"))
	}

	env.Client.Delete(context.Background(), accessConfigMap(ns, nil)) //nolint:errcheck // recreated below
	env.Create(t, accessConfigMap(ns, map[string]string{KeyProvider: ProviderAzure, KeyCluster: aksCluster + "-local", KeyServiceAccountName: "deployer"}))
	_, err := r.Resolve(context.Background(), Request{Namespace: ns, KubeConfig: &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "access"}}})
	if err == nil || !strings.Contains(err.Error(), "does not have Microsoft Entra ID integration enabled") {
		t.Errorf("err = %v", err)
	}
}

// TestCloudConfigMapRefusals are the ConfigMaps refused before any cloud
// call, with Flux's messages.
func TestCloudConfigMapRefusals(t *testing.T) {
	const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	tests := []struct {
		name string
		data map[string]string
		want string
	}{
		{"aws without cluster", map[string]string{KeyProvider: ProviderAWS, KeyAddress: "https://a.example.com", KeyCA: ca},
			"KubeConfig ConfigMap 'apps/access': key 'cluster' (the EKS cluster ARN) is required for provider 'aws'"},
		{"aws with a bad ARN", map[string]string{KeyProvider: ProviderAWS, KeyCluster: "prod"},
			"KubeConfig ConfigMap 'apps/access': invalid EKS cluster ARN: 'prod'. must match ^arn:aws[\\w-]*:eks:([^:]{1,100}):[0-9]{1,30}:cluster/(.{1,200})$"},
		{"gcp with a bad name", map[string]string{KeyProvider: ProviderGCP, KeyCluster: "prod"},
			"KubeConfig ConfigMap 'apps/access': invalid GKE cluster ID: 'prod'. must match ^projects/[^/]{1,200}/locations/[^/]{1,200}/clusters/[^/]{1,200}$"},
		{"azure with a bad ID", map[string]string{KeyProvider: ProviderAzure, KeyCluster: "prod"},
			"KubeConfig ConfigMap 'apps/access': invalid AKS cluster ID: 'prod'. must match (?i)^/subscriptions/([^/]{36})/resourceGroups/([^/]{1,200})/providers/Microsoft\\.ContainerService/managedClusters/([^/]{1,200})$"},
		{"gcp with neither cluster nor CA", map[string]string{KeyProvider: ProviderGCP, KeyAddress: "https://a.example.com"},
			"KubeConfig ConfigMap 'apps/access': key 'cluster' is required for provider 'gcp' when 'address' or 'ca.crt' is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseClusterAccess(types.NamespacedName{Namespace: "apps", Name: "access"}, tt.data)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant  %s", err, tt.want)
			}
			if errs.Reason(err, "") != InvalidKubeConfigReason || !errs.IsStalling(err) {
				t.Errorf("err %#v is not stalling with %s", err, InvalidKubeConfigReason)
			}
		})
	}
}
