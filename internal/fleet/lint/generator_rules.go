package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weir-gitops/weir/internal/fleet"
)

// atGenerator is a finding about an ArtifactGenerator, where it is written.
func atGenerator(g *fleet.Generator, msg string) Finding {
	return Finding{Object: fleet.Key(g.Object), File: g.File, Line: g.Line, Message: msg}
}

func generatorInvalid(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, g := range c.Generators {
		if g.Err != nil {
			out = append(out, atGenerator(g, fmt.Sprintf("invalid spec: %v; it generates no ExternalArtifact", g.Err)))
		}
	}
	return out
}

func generatorCopyFailed(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, g := range c.Generators {
		keys := make([]string, 0, len(g.Failed))
		for k := range g.Failed {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, atGenerator(g, fmt.Sprintf("%s: %v; the generator fails to build it, and what syncs it never reconciles", k, g.Failed[k])))
		}
	}
	return out
}

func generatorCopyOverwrites(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, g := range c.Generators {
		for _, k := range slices.Sorted(maps.Keys(g.Overwrites)) {
			for _, o := range g.Overwrites[k] {
				out = append(out, atGenerator(g, fmt.Sprintf("%s: %s is copied by '%s' and then replaced by '%s'; exclude it from the first copy if the replacement is meant, or use strategy: Merge for a values file",
					k, o.Path, o.First, o.Then)))
			}
		}
	}
	return out
}

func generatorSourceUnresolved(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, g := range c.Generators {
		if len(g.Unresolved) > 0 {
			out = append(out, atGenerator(g, fmt.Sprintf("source %s is not local to the graph of %s (not this repository nor given with --source): its ExternalArtifacts are not built offline",
				strings.Join(g.Unresolved, ", "), c.Entry)))
		}
	}
	return out
}
