package migratecmd

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/weir-gitops/weir/config/crd"
)

// supportedVersions are the Flux minor versions --version accepts, newest
// first. Flux 2.8 and 2.9 store every kind at the version weir's CRDs store
// it, so both read the versions from the CRDs rather than from a list kept
// by hand.
var supportedVersions = []string{"2.9", "2.8"}

// latestVersions maps each Flux group and kind to the version manifests
// migrate to for the Flux minor version (empty: the newest): the storage
// version of weir's CRD for the kind.
func latestVersions(version string) (map[schema.GroupKind]string, error) {
	if version != "" && !slices.Contains(supportedVersions, version) {
		return nil, fmt.Errorf("version %s is not supported, supported versions are: %s",
			version, strings.Join(supportedVersions, ", "))
	}
	crds, err := crd.Load(crd.Options{})
	if err != nil {
		return nil, err
	}
	latest := make(map[schema.GroupKind]string, len(crds))
	for _, c := range crds {
		for _, v := range c.Spec.Versions {
			if v.Storage {
				latest[schema.GroupKind{Group: c.Spec.Group, Kind: c.Spec.Names.Kind}] = v.Name
			}
		}
	}
	return latest, nil
}
