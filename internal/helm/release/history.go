package release

import (
	"sort"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Record puts snapshot s into history (newest first): it replaces the
// entry of the same revision, keeping what only the controller knows of it
// (test results, OCI digest, action) when s lacks them. The history is
// then trimmed to the releases since, and including, the last successful
// one before the newest — what a rollback may return to — and to
// maxHistory entries when positive.
func Record(history helmv2.Snapshots, s *helmv2.Snapshot, maxHistory int, ignoreTests bool) helmv2.Snapshots {
	out := make(helmv2.Snapshots, 0, len(history)+1)
	replaced := false
	for _, old := range history {
		if old == nil {
			continue
		}
		if old.Name == s.Name && old.Namespace == s.Namespace && old.Version == s.Version {
			out = append(out, merged(old, s))
			replaced = true
			continue
		}
		out = append(out, old)
	}
	if !replaced {
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Version > out[j].Version })
	return trim(out, maxHistory, ignoreTests)
}

func merged(old, s *helmv2.Snapshot) *helmv2.Snapshot {
	n := *s
	if n.TestHooks == nil {
		n.TestHooks = old.TestHooks
	}
	if n.OCIDigest == "" {
		n.OCIDigest = old.OCIDigest
	}
	if n.Action == "" {
		n.Action = old.Action
	}
	return &n
}

func trim(h helmv2.Snapshots, maxHistory int, ignoreTests bool) helmv2.Snapshots {
	for i := 1; i < len(h); i++ {
		if (h[i].Status == "deployed" || h[i].Status == "superseded") && (ignoreTests || !h[i].HasTestInPhase("Failed")) {
			h = h[:i+1]
			break
		}
	}
	if maxHistory > 0 && len(h) > maxHistory {
		h = h[:maxHistory]
	}
	return h
}
