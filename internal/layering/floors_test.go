package layering

import (
	"regexp"
	"strings"
)

// A floor is a storey of the house: a package may import packages on its
// own floor or below, never above. Floors are listed from the top; every
// package of the module must live on exactly one (the first whose pattern
// matches), so a new package without a place fails the test instead of
// slipping past it.
type floor struct {
	level int
	name  string
	// patterns are regular expressions over the import path relative to
	// the module, anchored at both ends.
	patterns []string
}

// floors is the architecture as docs/architecture.md draws it.
var floors = []floor{
	{9, "binaries", []string{`cmd/.+`}},
	{8, "the CLI (weir dev included, which starts app in-process)", []string{`internal/cli(/.+)?`}},
	{7, "test harnesses and generators: controllers and servers for tests and benchmarks", []string{
		`internal/devenv/testenv(/.+)?`, `bench(/.+)?`, `internal/layering`, `internal/image/e2e`,
		`examples/internal/gen`,
	}},
	{6, "the assembly: flags, manager, the list of controllers", []string{`internal/app`}},
	{5, "the controllers and the UI server", []string{
		`internal/[a-z]+/controller/[a-z]+`, `internal/source`, `internal/notification/eventserver`,
		`internal/ui/(server|web|browsertest|fleetview|objectview)`,
	}},
	{4, "domain packages", []string{
		`internal/source/(artifact|git|oci|bucket|helmrepo|chart|generate|neterr|sshkey)`,
		`internal/kustomize(/(render|decrypt|sopsformat|buildcache|sharedtree|applymemo))?`,
		`internal/helm/release`,
		`internal/notification/notifier(/(commitstatus|chat|incident|bus|notifiertest|githost|gitcomment))?`,
		`internal/notification/secretcache`,
		`internal/apply/(ssa|inventory|health|healthwatch|parked|dependency|restconfig)`,
		`internal/image/(scan|tagpolicy|setters)`,
		`internal/view/(kinds|objectstate|inventorytree|livediff)`,
		`internal/fleet(/(lint|fleetdiff))?`,
		`internal/install(/(manifests|bootstrap|containerimage|gitprovider))?`,
		`internal/devenv/(controlplane|gitserve|chartserve|dirlock)`,
		`internal/auth(/.+)?`,
	}},
	{3, "runtime: the kit every controller uses", []string{`internal/runtime(/.+)?`}},
	{2, "the scheme, the version, embedded manifests and examples", []string{
		`internal/scheme`, `internal/version`, `config/crd`, `examples`,
	}},
	{1, "api: the CRD types", []string{`api/.+`}},
}

// floorOf returns the floor of a package path relative to the module.
func floorOf(rel string) (floor, bool) {
	for _, f := range floors {
		for _, p := range f.patterns {
			if regexp.MustCompile(`^(` + p + `)$`).MatchString(rel) {
				return f, true
			}
		}
	}
	return floor{}, false
}

func relative(path string) (string, bool) {
	return strings.CutPrefix(path, module+"/")
}
