package app

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// featureGatesOf lists the --feature-gates each Flux controller accepts
// (its internal/features plus the fluxcd/pkg gates it registers), by weir
// controller name. Flux's controllers refuse a gate they do not know; weir
// refuses one that none of the controllers it runs knows, so a gate meant
// for kustomize-controller is accepted by a process that runs kustomize.
// A gate weir accepts but does not act on changes nothing.
var featureGatesOf = map[string][]string{
	"source": {"OptimizedGitClones", "CacheSecretsAndConfigMaps", "ObjectLevelWorkloadIdentity"},
	"kustomize": {
		"CacheSecretsAndConfigMaps", "DisableStatusPollerCache", "DisableFailFastBehavior",
		"StrictPostBuildSubstitutions", "GroupChangeLog", "AdditiveCELDependencyCheck", "ExternalArtifact",
		"CancelHealthCheckOnNewRevision", "DisableConfigWatchers", "DirectSourceFetch", "MigrateAPIVersion",
		"ObjectLevelWorkloadIdentity",
	},
	"image-reflector": {"ObjectLevelWorkloadIdentity"},
	"helm": {
		"CacheSecretsAndConfigMaps", "DetectDrift", "CorrectDrift", "AllowDNSLookups", "OOMWatch",
		"AdoptLegacyReleases", "DisableChartDigestTracking", "AdditiveCELDependencyCheck", "ExternalArtifact",
		"DisableConfigWatchers", "DirectSourceFetch", "UseHelm3Defaults", "CancelHealthCheckOnNewRevision",
		"DefaultToRetryOnFailure", "ObjectLevelWorkloadIdentity",
	},
	"notification": {"CacheSecretsAndConfigMaps", "DisableConfigWatchers", "ObjectLevelWorkloadIdentity"},
	"image-automation": {
		"GitForcePushBranch", "GitShallowClone", "GitAllBranchReferences", "GitSparseCheckout", "CacheSecretsAndConfigMaps",
	},
}

// checkFeatureGates returns Flux's error for the first gate (by name) that
// none of the selected controllers supports.
func checkFeatureGates(gates map[string]bool, selected []string) error {
	names := make([]string, 0, len(gates))
	for name := range gates {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		known := false
		for _, c := range selected {
			known = known || slices.Contains(featureGatesOf[c], name)
		}
		if !known {
			return fmt.Errorf("unable to load feature gates: feature-gate '%s' not supported", name)
		}
	}
	return nil
}

// parseGroupKinds reads --custom-apply-stage-kinds values as Flux does:
// group/Kind (rbac.authorization.k8s.io/Role); a kind of the core group
// is Kind or /Kind. weir once read Kind.group: that form, which no kind
// name can take (kinds have no dots), is refused with the right one.
func parseGroupKinds(values []string) ([]schema.GroupKind, error) {
	out := make([]schema.GroupKind, 0, len(values))
	for _, raw := range values {
		v := strings.TrimSpace(raw)
		group, kind, found := strings.Cut(v, "/")
		if !found {
			group, kind = "", v
		}
		switch {
		case kind == "" || strings.Contains(kind, "/"):
			return nil, fmt.Errorf("--custom-apply-stage-kinds: %q is not group/Kind", raw)
		case strings.Contains(kind, "."):
			return nil, fmt.Errorf("--custom-apply-stage-kinds: %q is not group/Kind (write %s)", raw, suggestGroupKind(kind))
		}
		out = append(out, schema.GroupKind{Group: group, Kind: kind})
	}
	return out, nil
}

// suggestGroupKind turns Kind.group into group/Kind.
func suggestGroupKind(s string) string {
	kind, group, _ := strings.Cut(s, ".")
	return group + "/" + kind
}
