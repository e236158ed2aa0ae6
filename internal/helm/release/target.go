package release

import (
	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Target is where a release lives: its name, the namespace of its
// objects and the namespace of its storage Secrets.
type Target struct {
	Name, Namespace, StorageNamespace string
}

// TargetChange reports where hr's last release lives when the spec now
// puts it elsewhere, as Flux's helm-controller decides it: another release
// name (spec.releaseName, spec.targetNamespace), release namespace or
// storage namespace, or another chart name under the Reinstall
// chartNameChangeStrategy (the default). That release must be uninstalled
// before the new one is installed; why says what changed. A HelmRelease
// without history (first install, or a release adopted from outside) has
// nothing to move.
func TargetChange(hr *helmv2.HelmRelease, chartName string) (old Target, why string, changed bool) {
	cur := hr.Status.History.Latest()
	if cur == nil {
		return Target{}, "", false
	}
	old = Target{Name: cur.Name, Namespace: cur.Namespace, StorageNamespace: hr.Status.StorageNamespace}
	if old.StorageNamespace == "" {
		old.StorageNamespace = hr.GetStorageNamespace()
	}
	switch {
	case old.Name != hr.GetReleaseName():
		why = "release name changed"
	case old.Namespace != hr.GetReleaseNamespace():
		why = "release namespace changed"
	case old.StorageNamespace != hr.GetStorageNamespace():
		why = "storage namespace changed"
	case chartName != "" && cur.ChartName != chartName &&
		hr.GetUpgrade().GetChartNameChangeStrategy() == helmv2.ChartNameChangeReinstall:
		why = "chart name changed"
	default:
		return Target{}, "", false
	}
	return old, why, true
}
