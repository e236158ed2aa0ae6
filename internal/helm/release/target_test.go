package release

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

func TestTargetChange(t *testing.T) {
	released := func(change func(*helmv2.HelmRelease)) *helmv2.HelmRelease {
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}}
		hr.Status.StorageNamespace = "apps"
		hr.Status.History = helmv2.Snapshots{{Name: "web", Namespace: "apps", ChartName: "podinfo", Version: 1}}
		if change != nil {
			change(hr)
		}
		return hr
	}
	tests := []struct {
		name    string
		hr      *helmv2.HelmRelease
		chart   string
		wantWhy string
		wantOld Target
	}{
		{"unchanged", released(nil), "podinfo", "", Target{}},
		{"no history", released(func(hr *helmv2.HelmRelease) { hr.Status.History = nil }), "other", "", Target{}},
		{"release name", released(func(hr *helmv2.HelmRelease) { hr.Spec.ReleaseName = "frontend" }), "podinfo",
			"release name changed", Target{"web", "apps", "apps"}},
		{"target namespace renames too", released(func(hr *helmv2.HelmRelease) { hr.Spec.TargetNamespace = "prod" }), "podinfo",
			"release name changed", Target{"web", "apps", "apps"}},
		{"target namespace with a fixed name", released(func(hr *helmv2.HelmRelease) {
			hr.Spec.ReleaseName, hr.Spec.TargetNamespace = "web", "prod"
		}), "podinfo", "release namespace changed", Target{"web", "apps", "apps"}},
		{"storage namespace", released(func(hr *helmv2.HelmRelease) { hr.Spec.StorageNamespace = "helm" }), "podinfo",
			"storage namespace changed", Target{"web", "apps", "apps"}},
		{"storage namespace unknown to an old status", released(func(hr *helmv2.HelmRelease) { hr.Status.StorageNamespace = "" }), "podinfo",
			"", Target{}},
		{"chart name, Reinstall by default", released(nil), "podinfo-v2", "chart name changed", Target{"web", "apps", "apps"}},
		{"chart name, InPlaceUpdate", released(func(hr *helmv2.HelmRelease) {
			hr.Spec.Upgrade = &helmv2.Upgrade{ChartNameChangeStrategy: helmv2.ChartNameChangeInPlaceUpdate}
		}), "podinfo-v2", "", Target{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, why, changed := TargetChange(tt.hr, tt.chart)
			if why != tt.wantWhy || changed != (tt.wantWhy != "") || old != tt.wantOld {
				t.Errorf("TargetChange = %+v, %q, %v; want %+v, %q", old, why, changed, tt.wantOld, tt.wantWhy)
			}
		})
	}
}
