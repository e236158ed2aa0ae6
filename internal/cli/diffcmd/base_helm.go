package diffcmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/fleet"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/source/chart"
)

// chartRenderer renders HelmReleases whose chart is a directory of a
// local source, with the code `weir build hr` runs (release.Render), and
// renders a release once when its spec and chart directory are the same
// on both sides.
type chartRenderer struct {
	byDigest map[string][]*unstructured.Unstructured
	renders  int
}

func newChartRenderer() *chartRenderer {
	return &chartRenderer{byDigest: map[string][]*unstructured.Unstructured{}}
}

// render returns the objects installing n's release would apply (CRDs
// by its policy, then the manifest), the digest of its inputs, or why it
// cannot be rendered offline, or its failure.
func (r *chartRenderer) render(ctx context.Context, c *fleet.Cluster, n *fleet.Node) (
	objects []*unstructured.Unstructured, digest, skipped string, err error) {
	hr := n.HelmRelease
	root, rel, skipped := chartSource(c, n)
	if skipped != "" {
		return nil, "", skipped, nil
	}
	if len(hr.Spec.ValuesFrom) > 0 {
		ref := hr.Spec.ValuesFrom[0]
		return nil, "", fmt.Sprintf("its values come from %s/%s (valuesFrom), which is read from the cluster", ref.Kind, ref.Name), nil
	}
	if digest, err = releaseDigest(hr, root, rel); err != nil {
		return nil, "", "", err
	}
	if objects, ok := r.byDigest[digest]; ok {
		return objects, digest, "", nil
	}
	r.renders++
	objects, err = renderRelease(ctx, hr, root, rel)
	if err != nil {
		return nil, digest, "", err
	}
	r.byDigest[digest] = objects
	return objects, digest, "", nil
}

// chartSource is the source tree and the chart's path in it, or why the
// chart is not available offline.
func chartSource(c *fleet.Cluster, n *fleet.Node) (root, rel, skipped string) {
	hr := n.HelmRelease
	if hr.Spec.Chart == nil {
		return "", "", fmt.Sprintf("its chart comes from %s (spec.chartRef), which is not available offline", n.Source)
	}
	src := c.Sources[n.Source]
	if src == nil || src.Dir == "" || src.Object.GetKind() != "GitRepository" {
		return "", "", fmt.Sprintf("its chart comes from %s, which is not available offline; the HelmRelease's own change shows in its parent", n.Source)
	}
	return src.Dir, hr.Spec.Chart.Spec.Chart, ""
}

// releaseDigest hashes the HelmRelease and every file of its chart
// directory and values files.
func releaseDigest(hr *helmv2.HelmRelease, root, rel string) (string, error) {
	h := sha256.New()
	spec, err := json.Marshal(hr)
	if err != nil {
		return "", err
	}
	h.Write(spec)
	paths := append([]string{rel}, hr.Spec.Chart.Spec.ValuesFiles...)
	for _, p := range paths {
		dir, err := chart.SecurePath(root, p)
		if err != nil {
			fmt.Fprintf(h, "%s\x00unreadable\n", p) // the render says why
			continue
		}
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(h, "%s\x00%s\n", path[len(dir):], hex.EncodeToString(sum[:]))
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("HelmRelease %s/%s: reading the chart: %w", hr.Namespace, hr.Name, err)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// renderRelease loads the chart as the source controller builds it from
// a Git source (values files merged into values.yaml) and renders the
// release as a fresh install.
func renderRelease(ctx context.Context, hr *helmv2.HelmRelease, root, rel string) ([]*unstructured.Unstructured, error) {
	chrt, err := chart.LoadDir(root, rel, chart.Limits{})
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", rel, err)
	}
	tmpl := hr.Spec.Chart.Spec
	if files := chart.EffectiveValuesFiles(tmpl.ValuesFiles); len(files) > 0 {
		vals, _, err := chart.MergeValuesFiles(root, files, tmpl.IgnoreMissingValuesFiles, chart.Limits{})
		if err != nil {
			return nil, fmt.Errorf("merging values files: %w", err)
		}
		if _, err := chart.OverwriteValues(chrt, vals); err != nil {
			return nil, fmt.Errorf("merging values files: %w", err)
		}
	}
	values, err := release.Values(ctx, nil, hr)
	if err != nil {
		return nil, err
	}
	rendered, err := release.Render(ctx, hr, chrt, values, release.RenderOptions{Namespaced: release.BuiltinNamespaced})
	if err != nil {
		return nil, err
	}
	return append(append([]*unstructured.Unstructured{}, rendered.CRDs...), rendered.Objects...), nil
}
