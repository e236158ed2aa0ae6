package chart

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// fakeRepo serves packaged charts from an in-memory index.
type fakeRepo struct {
	index     *repo.IndexFile
	archives  map[string][]byte
	downloads int
}

func newFakeRepo(t testing.TB, charts ...[2]string) *fakeRepo {
	r := &fakeRepo{index: repo.NewIndexFile(), archives: map[string][]byte{}}
	for _, c := range charts {
		data := packaged(t, c[0], c[1])
		url := c[0] + "-" + c[1] + ".tgz"
		r.archives[url] = data
		r.index.Entries[c[0]] = append(r.index.Entries[c[0]], &repo.ChartVersion{
			Metadata: helmMetadata(c[0], c[1]), URLs: []string{url}})
	}
	return r
}

func (r *fakeRepo) Resolve(_ context.Context, name, version string) (*repo.ChartVersion, error) {
	return ResolveVersion(r.index, name, version)
}

func (r *fakeRepo) Download(_ context.Context, cv *repo.ChartVersion, l Limits) ([]byte, error) {
	r.downloads++
	return ReadArchive(strings.NewReader(string(r.archives[cv.URLs[0]])), cv.URLs[0], l)
}

func TestBuildLocalWithDependencies(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"charts/app/Chart.yaml": chartYAML("app", "1.2.3", "dependencies:",
			"- name: lib\n  version: \"~0.1\"\n  repository: file://../lib",
			"- name: redis\n  version: \">=17.0.0 <18.0.0\"\n  repository: https://charts.example.com/stable"),
		"charts/app/values.yaml":        "greeting: hello\n",
		"charts/app/templates/cm.yaml":  "kind: ConfigMap\n",
		"charts/lib/Chart.yaml":         chartYAML("lib", "0.1.5"),
		"charts/lib/templates/_lib.tpl": "{{- define \"lib\" -}}{{- end -}}\n",
		"envs/prod.yaml":                "greeting: prod\nreplicas: 2\n",
		"charts/evil/Chart.yaml":        chartYAML("evil", "1.0.0", "dependencies:", "- name: lib\n  repository: file://../../../outside"),
		"charts/wrongver/Chart.yaml":    chartYAML("wrongver", "1.0.0", "dependencies:", "- name: lib\n  version: \"2.x\"\n  repository: file://../lib"),
		"charts/alias/Chart.yaml":       chartYAML("alias", "1.0.0", "dependencies:", "- name: redis\n  repository: \"@bitnami\""),
	})
	remote := newFakeRepo(t, [2]string{"redis", "17.3.0"}, [2]string{"redis", "18.0.0"})
	var askedURL string
	repos := func(_ context.Context, url string) (Repository, error) {
		askedURL = url
		return remote, nil
	}

	b, err := BuildLocal(context.Background(), LocalOptions{
		Root: root, Path: "charts/app", ValuesFiles: []string{"charts/app/values.yaml", "envs/prod.yaml"},
		VersionMetadata: "abcdef012345.2", Repositories: repos, OutDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "app" || b.Version != "1.2.3+abcdef012345.2" || !b.Packaged || b.ResolvedDependencies != 2 {
		t.Errorf("build = %+v", b)
	}
	if askedURL != "https://charts.example.com/stable" {
		t.Errorf("asked repository %q", askedURL)
	}
	data, err := ReadArchiveFile(b.Path, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := LoadArchive(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var deps []string
	for _, d := range ch.Dependencies() {
		deps = append(deps, d.Name()+"-"+d.Metadata.Version)
	}
	// Helm's loader gathers subcharts in a map: their order after loading
	// is not the archive's.
	slices.Sort(deps)
	if d := cmp.Diff([]string{"lib-0.1.5", "redis-17.3.0"}, deps); d != "" {
		t.Errorf("packaged dependencies (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"greeting": "prod", "replicas": float64(2)}, ch.Values); d != "" {
		t.Errorf("packaged values (-want +got):\n%s", d)
	}
	if ch.Metadata.Version != "1.2.3+abcdef012345.2" {
		t.Errorf("packaged version %s", ch.Metadata.Version)
	}

	for _, tc := range []struct{ path, want string }{
		{"charts/evil", "path escapes the source root"},
		{"charts/wrongver", "can't get a valid version for dependency 'lib'"},
		{"charts/alias", "is a Helm CLI alias"},
	} {
		_, err := BuildLocal(context.Background(), LocalOptions{Root: root, Path: tc.path, Repositories: repos, OutDir: t.TempDir()})
		var be *BuildError
		if !errors.As(err, &be) || be.Reason != ErrDependencyBuild || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want a dependency build error with %q", tc.path, err, tc.want)
		}
	}
}

func TestBuildLocalUpToDateAndArchive(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(root+"/app-1.0.0.tgz", packaged(t, "app", "1.0.0"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := BuildLocal(context.Background(), LocalOptions{Root: root, Path: "app-1.0.0.tgz", OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if b.Packaged || b.Path == "" || b.Summary() != "pulled 'app' chart with version '1.0.0'" {
		t.Errorf("archive taken as is: %+v, %s", b, b.Summary())
	}
	b, err = BuildLocal(context.Background(), LocalOptions{Root: root, Path: "app-1.0.0.tgz", OutDir: t.TempDir(),
		UpToDate: func(name, version string) bool { return name == "app" && version == "1.0.0" }})
	if err != nil || !b.UpToDate || b.Path != "" {
		t.Errorf("up to date build = %+v, %v", b, err)
	}
	_, err = BuildLocal(context.Background(), LocalOptions{Root: root, Path: "missing", OutDir: t.TempDir()})
	var be *BuildError
	if !errors.As(err, &be) || be.Reason != ErrChartReference || !be.Persistent() {
		t.Errorf("missing chart path: %v", err)
	}
}

func TestBuildRemote(t *testing.T) {
	r := newFakeRepo(t, [2]string{"app", "1.0.0"}, [2]string{"app", "1.1.0"})
	b, err := BuildRemote(context.Background(), r, RemoteOptions{Name: "app", Version: "1.x", OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != "1.1.0" || b.Packaged || b.Summary() != "pulled 'app' chart with version '1.1.0'" {
		t.Errorf("build = %+v", b)
	}
	got, _ := os.ReadFile(b.Path)
	if string(got) != string(r.archives["app-1.1.0.tgz"]) {
		t.Error("pulled chart is not the repository's archive byte for byte")
	}

	b, err = BuildRemote(context.Background(), r, RemoteOptions{Name: "app", Version: "1.0.0",
		ValuesFiles: []string{"values.yaml", "missing.yaml"}, IgnoreMissingValuesFiles: true, VersionMetadata: "3", OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != "1.0.0+3" || !b.Packaged || len(b.ValuesFiles) != 1 {
		t.Errorf("build with values = %+v", b)
	}

	_, err = BuildRemote(context.Background(), r, RemoteOptions{Name: "app", Version: "1.0.0", ValuesFiles: []string{"nope.yaml"}, OutDir: t.TempDir()})
	var be *BuildError
	if !errors.As(err, &be) || be.Reason != ErrValuesFilesMerge || !strings.Contains(err.Error(), "no values file found at path 'nope.yaml'") {
		t.Errorf("missing values file: %v", err)
	}
	_, err = BuildRemote(context.Background(), r, RemoteOptions{Name: "app", Version: "9.x", OutDir: t.TempDir()})
	if err == nil || err.Error() != "invalid chart reference: failed to get chart version for remote reference: no 'app' chart with version matching '9.x' found" {
		t.Errorf("missing version: %v", err)
	}
	n := r.downloads
	_, err = BuildRemote(context.Background(), r, RemoteOptions{Name: "app", Version: "1.0.0", OutDir: t.TempDir(),
		UpToDate: func(string, string) bool { return true }})
	if err != nil || r.downloads != n {
		t.Errorf("up to date chart downloaded again (%d downloads), err %v", r.downloads-n, err)
	}
	_, err = BuildRemote(context.Background(), r, RemoteOptions{Name: "app", Version: "1.0.0", Limits: Limits{MaxChartSize: 100}, OutDir: t.TempDir()})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("chart over the limit: %v", err)
	}
}
