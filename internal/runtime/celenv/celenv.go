// Package celenv owns the options of Flux's CEL environment, which every
// CEL expression a user writes for weir compiles with (health checks,
// readyExpr, commitStatusExpr): the same literals, time zone, numeric
// comparisons, optional types and the strings, sets and encoders
// extensions.
package celenv

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// FluxOptions returns the options of Flux's CEL environment; callers add
// their variables.
func FluxOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Encoders(),
	}
}
