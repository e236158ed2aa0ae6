package helmrelease

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

// Media types of a Helm chart pushed to an OCI registry (`helm push`).
const (
	helmConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	helmChartMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// pushHelmChart pushes tgz as a Helm OCI chart host/repo:tag and returns
// the manifest digest.
func pushHelmChart(t *testing.T, host, repo, tag string, tgz []byte) string {
	t.Helper()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tgz)), nil
	}, tarball.WithMediaType(helmChartMediaType))
	if err != nil {
		t.Fatal(err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, helmConfigMediaType)
	if img, err = mutate.Append(img, mutate.Addendum{Layer: layer}); err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag(host+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// TestOCIRepositoryChart installs a chart from an OCIRepository that
// copies the Helm chart layer, as `flux create hr podinfo
// --chart-ref=OCIRepository/podinfo` sets it up. Flux's rule: the chart
// version carries the first 12 hex characters of the OCI digest.
func TestOCIRepositoryChart(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	digest := pushHelmChart(t, reg.Host(), "charts/app", "1.0.0", packageChart(t, newChart("1.0.0")))

	repo := &sourcev1.OCIRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns},
		Spec: sourcev1.OCIRepositorySpec{
			URL:           "oci://" + reg.Host() + "/charts/app",
			Reference:     &sourcev1.OCIRepositoryRef{Tag: "1.0.0"},
			LayerSelector: &sourcev1.OCILayerSelector{MediaType: helmChartMediaType, Operation: sourcev1.OCILayerCopy},
			Interval:      metav1.Duration{Duration: time.Hour},
		},
	}
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns},
		Spec: helmv2.HelmReleaseSpec{
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: "podinfo", Namespace: ns},
			Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	// The HelmRelease first: it waits for the artifact and follows it at
	// once when it comes (the watch, not --requeue-dependency, an hour here).
	env.Create(t, hr, repo)

	version := "1.0.0+" + strings.TrimPrefix(digest, "sha256:")[:12]
	env.WaitForReady(t, hr, func() (bool, string) {
		want := fmt.Sprintf("Helm install succeeded for release %s/podinfo.v1 with chart app@%s", ns, version)
		msg := hr.Status.Conditions[0].Message
		for _, c := range hr.Status.Conditions {
			if c.Type == "Ready" {
				msg = c.Message
			}
		}
		return msg == want, msg
	})
	if hr.Status.LastAttemptedRevision != version || hr.Status.LastAttemptedRevisionDigest != digest {
		t.Errorf("lastAttemptedRevision %q digest %q, want %q %q", hr.Status.LastAttemptedRevision, hr.Status.LastAttemptedRevisionDigest, version, digest)
	}
	if s := hr.Status.History.Latest(); s == nil || s.OCIDigest != digest || s.ChartVersion != version {
		t.Errorf("history = %+v", s)
	}
}
