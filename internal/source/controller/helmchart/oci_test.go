package helmchart

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// packageChart returns the archive of a test chart; appVersion varies the
// content.
func packageChart(t *testing.T, name, version, appVersion string) []byte {
	t.Helper()
	return helmserver.Package(t, helmserver.NewChart(name, version, appVersion))
}

func newOCIRepo(ns, name, url, secret string) *sourcev1.HelmRepository {
	hr := newHelmRepo(ns, name, url, secret)
	hr.Spec.Type = sourcev1.HelmRepositoryTypeOCI
	return hr
}

// TestOCIChart pulls charts from an authenticated registry by tag and by
// semver range, and records the manifest digest.
func TestOCIChart(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{Username: "user", Password: "pass"})
	digests := map[string]string{}
	for _, v := range []string{"6.0.1", "6.2.0", "7.0.0"} {
		digests[v] = reg.PushChart(t, "charts/podinfo", v, packageChart(t, "podinfo", v, v))
	}
	env.Create(t, basicAuthSecret(ns, "reg-auth", "pass"), newOCIRepo(ns, "podinfo", "oci://"+reg.Host()+"/charts", "reg-auth"))

	tests := []struct{ name, version, want string }{
		{name: "tag", version: "6.0.1", want: "6.0.1"},
		{name: "semver", version: ">6.0.0 <7.0.0", want: "6.2.0"},
		{name: "latest", version: "*", want: "7.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hc := newChart(ns, "oci-"+tt.name, sourcev1.HelmRepositoryKind, "podinfo", "podinfo", tt.version)
			env.Create(t, hc)
			waitVersion(t, env, hc, tt.want)
			if got := hc.Status.Artifact.Metadata[ociDigestKey]; got != digests[tt.want] {
				t.Errorf("recorded digest %q, want %q", got, digests[tt.want])
			}
			msg := "pulled 'podinfo' chart with version '" + tt.want + "'"
			if ready := conditions.Get(hc, meta.ReadyCondition); ready.Message != msg {
				t.Errorf("Ready %q, want %q", ready.Message, msg)
			}
			files := testenv.ArtifactFiles(t, testenv.DownloadArtifact(t, hc.Status.Artifact))
			if !strings.Contains(files["podinfo/Chart.yaml"], "version: "+tt.want) {
				t.Errorf("Chart.yaml %q", files["podinfo/Chart.yaml"])
			}
		})
	}
	t.Run("wrong credentials", func(t *testing.T) {
		env.Create(t, basicAuthSecret(ns, "bad-auth", "nope"), newOCIRepo(ns, "badrepo", "oci://"+reg.Host()+"/charts", "bad-auth"))
		hc := newChart(ns, "oci-bad", sourcev1.HelmRepositoryKind, "badrepo", "podinfo", "6.0.1")
		env.Create(t, hc)
		ready := env.WaitForFailure(t, hc, "ChartPullError")
		if strings.Contains(ready.Message, "nope") || conditions.IsTrue(hc, meta.StalledCondition) {
			t.Errorf("Ready %q (stalled: %v)", ready.Message, conditions.IsTrue(hc, meta.StalledCondition))
		}
		t.Log(ready.Message)
	})
}

// createVerified creates the HelmChart name of chart app at version from
// the HelmRepository repo, verified with the cosign keys of the Secret
// cosign-keys.
func createVerified(t *testing.T, env *testenv.Env, ns, name, repo, version string) *sourcev1.HelmChart {
	t.Helper()
	hc := newChart(ns, name, sourcev1.HelmRepositoryKind, repo, "app", version)
	hc.Spec.Verify = &sourcev1.OCIVerification{Provider: sourcev1.VerificationProviderCosign,
		SecretRef: &meta.LocalObjectReference{Name: "cosign-keys"}}
	env.Create(t, hc)
	return hc
}

// TestOCICosign verifies charts with cosign public keys: signed by the
// key, signed by another key, and a tag re-pushed after signing.
func TestOCICosign(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	key, other := ociregistry.NewCosignKey(t), ociregistry.NewCosignKey(t)
	good := reg.PushChart(t, "charts/app", "1.0.0", packageChart(t, "app", "1.0.0", "a"))
	key.Sign(t, reg, "charts/app", good)
	signedByOther := reg.PushChart(t, "charts/app", "2.0.0", packageChart(t, "app", "2.0.0", "a"))
	other.Sign(t, reg, "charts/app", signedByOther)
	tampered := reg.PushChart(t, "charts/app", "3.0.0", packageChart(t, "app", "3.0.0", "a"))
	key.Sign(t, reg, "charts/app", tampered)
	reg.PushChart(t, "charts/app", "3.0.0", packageChart(t, "app", "3.0.0", "evil"))

	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cosign-keys", Namespace: ns},
		Data: map[string][]byte{"cosign.pub": key.PublicPEM(t)}}
	env.Create(t, keys, newOCIRepo(ns, "repo", "oci://"+reg.Host()+"/charts", ""))
	verified := func(name, version string) *sourcev1.HelmChart {
		return createVerified(t, env, ns, name, "repo", version)
	}

	t.Run("good signature", func(t *testing.T) {
		hc := verified("good", "1.0.0")
		waitVersion(t, env, hc, "1.0.0")
		c := conditions.Get(hc, sourcev1.SourceVerifiedCondition)
		if c == nil || c.Status != metav1.ConditionTrue || c.Message != "verified signature of version 1.0.0" {
			t.Errorf("SourceVerified %v", c)
		}
	})
	for _, tt := range []struct{ name, version string }{{"other key", "2.0.0"}, {"tampered", "3.0.0"}} {
		t.Run(tt.name, func(t *testing.T) {
			hc := verified(strings.ReplaceAll(tt.name, " ", "-"), tt.version)
			ready := env.WaitForFailure(t, hc, "ChartVerificationError")
			c := conditions.Get(hc, sourcev1.SourceVerifiedCondition)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != sourcev1.VerificationError ||
				!strings.Contains(ready.Message, "failed to verify the signature using provider 'cosign'") ||
				!conditions.IsTrue(hc, sourcev1.BuildFailedCondition) || hc.Status.Artifact != nil {
				t.Errorf("Ready %q, SourceVerified %v, artifact %v", ready.Message, c, hc.Status.Artifact)
			}
			t.Log(ready.Message)
		})
	}
	t.Run("keyless is not supported yet", func(t *testing.T) {
		hc := newChart(ns, "keyless", sourcev1.HelmRepositoryKind, "repo", "app", "1.0.0")
		hc.Spec.Verify = &sourcev1.OCIVerification{Provider: sourcev1.VerificationProviderCosign}
		env.Create(t, hc)
		ready := env.WaitForFailure(t, hc, sourcev1.VerificationError)
		if !strings.Contains(ready.Message, "not supported yet") || !conditions.IsTrue(hc, meta.StalledCondition) {
			t.Errorf("Ready %q, conditions %v", ready.Message, hc.Status.Conditions)
		}
	})
}
