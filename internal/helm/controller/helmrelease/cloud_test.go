package helmrelease

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
)

// TestOCIRepositoryChartFromECR installs a chart that an OCIRepository
// with provider aws pulled from "ECR" as the controller's IRSA identity
// (the registry takes only the ECR login; its host reaches the local
// registry through the object's proxy): the release follows the
// artifact, whatever the credentials it took to fetch.
func TestOCIRepositoryChartFromECR(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake, reg := awsfake.NewECR(t, env.Client, ns)
	digest := reg.PushChart(t, "charts/app", "1.0.0", packageChart(t, newChart("1.0.0")))
	awsfake.SetIRSAAs(t, env.Client, ns, "source-controller")
	proxy := awsfake.NewProxy(t, awsfake.ProxyOptions{Registry: reg.URL()})
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "proxy", Namespace: ns},
		Data: map[string][]byte{"address": []byte(proxy.URL)}})

	repo := &sourcev1.OCIRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: sourcev1.OCIRepositorySpec{
			URL:            "oci://123456789012.dkr.ecr.us-east-2.amazonaws.com/charts/app",
			Reference:      &sourcev1.OCIRepositoryRef{Tag: "1.0.0"},
			LayerSelector:  &sourcev1.OCILayerSelector{MediaType: helmChartMediaType, Operation: sourcev1.OCILayerCopy},
			Provider:       sourcev1.AmazonOCIProvider,
			Insecure:       true,
			ProxySecretRef: &meta.LocalObjectReference{Name: "proxy"},
			Interval:       metav1.Duration{Duration: time.Hour},
		},
	}
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: helmv2.HelmReleaseSpec{
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: "app", Namespace: ns},
			Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	env.Create(t, repo, hr)
	version := "1.0.0+" + strings.TrimPrefix(digest, "sha256:")[:12]
	env.WaitForReady(t, hr, func() (bool, string) {
		return hr.Status.LastAttemptedRevision == version, "last attempted " + hr.Status.LastAttemptedRevision
	})
	if s := hr.Status.History.Latest(); s == nil || s.OCIDigest != digest {
		t.Errorf("history = %+v", s)
	}
	if n, m := len(fake.Requests("sts")), len(fake.Requests("ecr")); n != 1 || m != 1 {
		t.Errorf("%d STS and %d ECR calls, want 1 and 1", n, m)
	}
}
