package app

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// featureGatesOf lists, by weir controller name, exactly the --feature-gates
// the Flux controller of that name accepts: the map of its own features
// package, including the names it takes from fluxcd/pkg runtime/controller
// (CacheSecretsAndConfigMaps, AdditiveCELDependencyCheck, ExternalArtifact,
// DisableConfigWatchers, DirectSourceFetch), plus ObjectLevelWorkloadIdentity,
// which fluxcd/pkg auth.SetFeatureGates adds to every controller's map.
// Flux checks --feature-gates against that one map at start; a gate a
// controller no longer has (source-controller dropped OptimizedGitClones in
// v1.0) is unknown to it like any other. weir runs the union of the
// selected controllers, so a gate passes if one of them accepts it. Which
// gates weir acts on is docs/install.md's, whose table a test holds to
// this one.
var featureGatesOf = map[string][]string{
	"source": {"CacheSecretsAndConfigMaps", "ObjectLevelWorkloadIdentity"},
	"kustomize": {
		"CacheSecretsAndConfigMaps", "DisableStatusPollerCache", "DisableFailFastBehavior",
		"StrictPostBuildSubstitutions", "GroupChangeLog", "AdditiveCELDependencyCheck", "ExternalArtifact",
		"CancelHealthCheckOnNewRevision", "DisableConfigWatchers", "DirectSourceFetch", "MigrateAPIVersion",
		"ObjectLevelWorkloadIdentity",
	},
	"helm": {
		"CacheSecretsAndConfigMaps", "DetectDrift", "CorrectDrift", "AllowDNSLookups", "OOMWatch",
		"AdoptLegacyReleases", "DisableChartDigestTracking", "AdditiveCELDependencyCheck", "ExternalArtifact",
		"DisableConfigWatchers", "DirectSourceFetch", "UseHelm3Defaults", "CancelHealthCheckOnNewRevision",
		"DefaultToRetryOnFailure", "ObjectLevelWorkloadIdentity",
	},
	"notification": {"CacheSecretsAndConfigMaps", "DisableConfigWatchers", "ObjectLevelWorkloadIdentity"},
	// FluxStorage (image-reflector-controller v1.2) moves the tag lists
	// from BadgerDB to Flux's artifact storage; weir's are files already.
	"image-reflector": {"CacheSecretsAndConfigMaps", "FluxStorage", "ObjectLevelWorkloadIdentity"},
	"image-automation": {
		"GitForcePushBranch", "GitShallowClone", "GitAllBranchReferences", "GitSparseCheckout",
		"CacheSecretsAndConfigMaps", "ObjectLevelWorkloadIdentity",
	},
	// The web UI is weir's own and reads no gate.
	"ui": nil,
}

// checkFeatureGates returns the error a Flux controller starts with when
// --feature-gates names a gate it does not have, for the first such gate
// by name (Flux reports whichever its map iteration meets first):
// fluxcd/pkg runtime/features says "feature-gate '<name>' not supported",
// which the controller's main logs under "unable to load feature gates"
// before exiting 1.
func checkFeatureGates(gates map[string]bool, selected []string) error {
	names := make([]string, 0, len(gates))
	for name := range gates {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !gateAccepted(name, selected) {
			return fmt.Errorf("unable to load feature gates: feature-gate '%s' not supported", name)
		}
	}
	return nil
}

// gateAccepted reports whether one of the selected controllers accepts
// the gate.
func gateAccepted(name string, selected []string) bool {
	for _, c := range selected {
		if slices.Contains(featureGatesOf[c], name) {
			return true
		}
	}
	return false
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
