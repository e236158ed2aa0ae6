package helmchart

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/aws"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// cloudProxy is the proxy the test registry client sends the clouds'
// registry hosts to.
var cloudProxy atomic.Pointer[url.URL]

// cloudRegistryHosts mark the hosts of ECR, Artifact Registry and ACR.
var cloudRegistryHosts = []string{".dkr.ecr.", "-docker.pkg.dev/", ".azurecr.io/"}

// cloudRegistries is the real registry client that sends requests for
// the clouds' registry hosts through cloudProxy: a HelmRepository has no
// spec.proxySecretRef (Flux's neither), so this stands for what
// HTTPS_PROXY does for a controller in production. Other hosts go direct.
type cloudRegistries struct{ oci.Client }

func (c cloudRegistries) Remote(ctx context.Context, u string, o oci.Options) (oci.Remote, error) {
	cloud := slices.ContainsFunc(cloudRegistryHosts, func(h string) bool { return strings.Contains(u, h) })
	if p := cloudProxy.Load(); p != nil && o.Proxy == nil && cloud {
		o.Proxy = p
	}
	return c.Client.Remote(ctx, u, o)
}

// proxyRegistry makes reg the registry of every cloud host until the test
// ends, and returns the hosts the controller asked the proxy for.
func proxyRegistry(t *testing.T, reg *ociregistry.Registry) func() []string {
	t.Helper()
	proxy, hosts := awsfake.RegistryProxy(t, reg.URL())
	u, err := url.Parse(proxy)
	if err != nil {
		t.Fatal(err)
	}
	cloudProxy.Store(u)
	t.Cleanup(func() { cloudProxy.Store(nil) })
	return hosts
}

// ecrCharts is the fake AWS (its STS checking web identities with the
// API server), a registry that takes only the fake's ECR login, holding
// charts/app 1.0.0, and the proxy that maps every ECR host to it.
func ecrCharts(t *testing.T, env *testenv.Env, ns string) (*awsfake.Fake, *ociregistry.Registry, string, func() []string) {
	t.Helper()
	fake, reg := awsfake.NewECR(t, env.Client, ns)
	digest := reg.PushChart(t, "charts/app", "1.0.0", packageChart(t, "app", "1.0.0", "a"))
	return fake, reg, digest, proxyRegistry(t, reg)
}

func ecrRepo(ns, name, region string) *sourcev1.HelmRepository {
	hr := newOCIRepo(ns, name, "oci://123456789012.dkr.ecr."+region+".amazonaws.com/charts", "")
	hr.Spec.Provider, hr.Spec.Insecure = aws.ProviderName, true
	return hr
}

// TestProviderAWS pulls a chart from "ECR" through an OCI HelmRepository
// with provider aws, as the controller's IRSA identity: STS vouched for by
// the API server, ECR's GetAuthorizationToken signed with STS's keys, the
// registry accepting only the ECR login; a second reconcile exchanges
// nothing (the token cache). A web identity STS refuses fails with a
// message naming the calls and no credential.
func TestProviderAWS(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake, _, digest, hosts := ecrCharts(t, env, ns)
	awsfake.SetIRSAAs(t, env.Client, ns, "source-controller")
	env.Create(t, ecrRepo(ns, "ecr", "eu-west-1"))
	hc := newChart(ns, "app", sourcev1.HelmRepositoryKind, "ecr", "app", "1.0.0")
	env.Create(t, hc)
	waitVersion(t, env, hc, "1.0.0")
	if got := hc.Status.Artifact.Metadata[ociDigestKey]; got != digest {
		t.Errorf("digest %q, want %q", got, digest)
	}
	sts, ecr := fake.Requests("sts"), fake.Requests("ecr")
	if len(sts) != 1 || sts[0].Subject != "system:serviceaccount:"+ns+":source-controller" ||
		sts[0].Form.Get("RoleArn") != "arn:aws:iam::123456789012:role/source-controller" {
		t.Errorf("STS calls: %+v", sts)
	}
	if len(ecr) != 1 || ecr[0].Action != "GetAuthorizationToken" || ecr[0].Region != "eu-west-1" || ecr[0].SessionToken == "" {
		t.Errorf("ECR calls: %+v", ecr)
	}
	if h := hosts(); !slices.Contains(h, "123456789012.dkr.ecr.eu-west-1.amazonaws.com") {
		t.Errorf("registry reached as %v", h)
	}

	env.RequestReconcile(t, hc)
	env.WaitHandled(t, hc)
	if !conditions.IsReady(hc) {
		t.Errorf("second reconcile: %v", hc.Status.Conditions)
	}
	if n, m := len(fake.Requests("sts")), len(fake.Requests("ecr")); n != 1 || m != 1 {
		t.Errorf("after a second reconcile: %d STS and %d ECR calls, want 1 and 1 (cached)", n, m)
	}

	// Another region is another login; this time STS refuses the web
	// identity.
	awsfake.SetIRSA(t, "arn:aws:iam::123456789012:role/source-controller", "not-a-service-account-token")
	env.Create(t, ecrRepo(ns, "refused", "eu-west-2"))
	bad := newChart(ns, "refused", sourcev1.HelmRepositoryKind, "refused", "app", "1.0.0")
	env.Create(t, bad)
	ready := env.WaitForFailure(t, bad, sourcev1.AuthenticationFailedReason)
	want := "failed to get credential from 'aws': failed to get access token for artifact registry: " +
		"failed to create provider access token for the controller: "
	if !strings.HasPrefix(ready.Message, want) || !strings.Contains(ready.Message, "AssumeRoleWithWebIdentity") ||
		!strings.Contains(ready.Message, "InvalidIdentityToken") {
		t.Errorf("Ready %q, want prefix %q naming STS AssumeRoleWithWebIdentity", ready.Message, want)
	}
	for _, secret := range []string{"not-a-service-account-token", fake.RegistryPassword, "secret-ASIA", "session-"} {
		if strings.Contains(ready.Message, secret) {
			t.Errorf("Ready shows %q: %s", secret, ready.Message)
		}
	}
	t.Log(ready.Message)
}

// TestProviderAWSCosign verifies an "ECR" chart's cosign signature, which
// is fetched with the same ECR login as the chart; a chart re-pushed
// under the signed tag fails verification.
func TestProviderAWSCosign(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake, reg, digest, _ := ecrCharts(t, env, ns)
	awsfake.SetIRSAAs(t, env.Client, ns, "source-controller")
	key := ociregistry.NewCosignKey(t)
	key.Sign(t, reg, "charts/app", digest)
	tampered := reg.PushChart(t, "charts/app", "2.0.0", packageChart(t, "app", "2.0.0", "a"))
	key.Sign(t, reg, "charts/app", tampered)
	reg.PushChart(t, "charts/app", "2.0.0", packageChart(t, "app", "2.0.0", "evil"))
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cosign-keys", Namespace: ns},
		Data: map[string][]byte{"cosign.pub": key.PublicPEM(t)}}, ecrRepo(ns, "ecr", "eu-central-1"))
	good := createVerified(t, env, ns, "good", "ecr", "1.0.0")
	waitVersion(t, env, good, "1.0.0")
	if c := conditions.Get(good, sourcev1.SourceVerifiedCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("SourceVerified = %+v", c)
	}
	bad := createVerified(t, env, ns, "tampered", "ecr", "2.0.0")
	ready := env.WaitForFailure(t, bad, "ChartVerificationError")
	if c := conditions.Get(bad, sourcev1.SourceVerifiedCondition); c == nil || c.Status != metav1.ConditionFalse ||
		!strings.Contains(ready.Message, "failed to verify the signature using provider 'cosign'") {
		t.Errorf("Ready %q, SourceVerified %+v", ready.Message, c)
	}
	// Objects of earlier tests may still retry against this fake in
	// their own regions: count this registry's.
	var n int
	for _, r := range fake.Requests("ecr") {
		if r.Region == "eu-central-1" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d ECR calls for two charts of one registry, want 1 (cached)", n)
	}
}
