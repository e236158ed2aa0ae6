package chart

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

func testIndex(versions ...string) *repo.IndexFile {
	idx := repo.NewIndexFile()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, v := range versions {
		idx.Entries["app"] = append(idx.Entries["app"], &repo.ChartVersion{
			Metadata: &chartv2.Metadata{Name: "app", Version: v},
			Created:  base.Add(time.Duration(i) * time.Hour),
			URLs:     []string{"app-" + v + ".tgz"},
		})
	}
	return idx
}

func TestResolveVersion(t *testing.T) {
	idx := testIndex("0.9.0", "1.0.0", "1.4.2", "1.10.0", "2.0.0-rc.1", "2.0.0-rc.2", "v1.5.0", "1.6", "1.2.0+b", "1.2.0+a")
	idx.Entries["empty"] = repo.ChartVersions{}
	tests := []struct {
		name, chart, version string
		want                 string
		wantErr              string
	}{
		{name: "default is latest stable", chart: "app", version: "", want: "1.10.0"},
		{name: "star is latest stable", chart: "app", version: "*", want: "1.10.0"},
		{name: "exact", chart: "app", version: "1.4.2", want: "1.4.2"},
		{name: "exact prerelease", chart: "app", version: "2.0.0-rc.1", want: "2.0.0-rc.1"},
		{name: "exact non-strict string", chart: "app", version: "1.6", want: "1.6"},
		{name: "range", chart: "app", version: ">=1.0.0 <1.5.0", want: "1.4.2"},
		{name: "flux create hr range", chart: "app", version: ">0.9.0 <2.0.0", want: "1.10.0"},
		{name: "tilde", chart: "app", version: "~1.4", want: "1.4.2"},
		{name: "caret", chart: "app", version: "^1.0", want: "1.10.0"},
		{name: "x range", chart: "app", version: "1.x", want: "1.10.0"},
		{name: "leading v allowed", chart: "app", version: "~1.5", want: "v1.5.0"},
		{name: "prerelease range", chart: "app", version: ">=2.0.0-0", want: "2.0.0-rc.2"},
		{name: "build metadata tie goes to newest", chart: "app", version: "~1.2", want: "1.2.0+a"},
		{name: "no match", chart: "app", version: "3.x", wantErr: "no 'app' chart with version matching '3.x' found"},
		{name: "missing chart", chart: "nope", version: "*", wantErr: "no chart name found"},
		{name: "no versions", chart: "empty", version: "*", wantErr: "no chart version found"},
		{name: "bad constraint", chart: "app", version: "not a version", wantErr: "invalid version constraint 'not a version'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cv, err := ResolveVersion(idx, tt.chart, tt.version)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cv.Version != tt.want {
				t.Errorf("resolved %q to %s, want %s", tt.version, cv.Version, tt.want)
			}
		})
	}
	if _, err := ResolveVersion(idx, "nope", ""); !errors.Is(err, repo.ErrNoChartName) {
		t.Errorf("missing chart error %v is not repo.ErrNoChartName", err)
	}
}

// BenchmarkResolveVersion resolves a range in an index of 10,000 versions
// of one chart, the size of the largest public indexes.
func BenchmarkResolveVersion(b *testing.B) {
	versions := make([]string, 0, 10000)
	for i := range 10000 {
		versions = append(versions, fmt.Sprintf("%d.%d.%d", i/1000, (i/10)%100, i%10))
	}
	idx := testIndex(versions...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ResolveVersion(idx, "app", ">=5.0.0 <6.0.0"); err != nil {
			b.Fatal(err)
		}
	}
}
