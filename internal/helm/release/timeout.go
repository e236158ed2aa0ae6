package release

import (
	"time"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// ActionTimeout is how long action a may take for hr: its own timeout
// (spec.install.timeout…) or spec.timeout. Unlock writes one record and
// takes the release's.
func ActionTimeout(hr *helmv2.HelmRelease, a Action) time.Duration {
	def := hr.GetTimeout()
	switch a {
	case ActionInstall:
		return hr.GetInstall().GetTimeout(def)
	case ActionUpgrade:
		return hr.GetUpgrade().GetTimeout(def)
	case ActionTest:
		return hr.GetTest().GetTimeout(def)
	case ActionRollback:
		return hr.GetRollback().GetTimeout(def)
	case ActionUninstall:
		return hr.GetUninstall().GetTimeout(def)
	default:
		return def
	}
}

// Acts reports whether a runs a Helm action (rather than ending the
// reconcile).
func (a Action) Acts() bool {
	return a != ActionNone && a != ActionStall
}
