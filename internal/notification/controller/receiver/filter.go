package receiver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/weir-gitops/weir/internal/runtime/celenv"
)

// Variables a resource filter sees.
const (
	// resVar is the object the filter decides on, as a map.
	resVar = "res"
	// reqVar is the request body decoded as JSON, or an empty map.
	reqVar = "req"
	// claimsVar (genericoidc.go) holds the verified token claims of a
	// generic-oidc request, an empty map for the other types.
)

// filterEnv is built once; an Env is safe for concurrent use.
var filterEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(append(celenv.FluxOptions(),
		cel.Variable(resVar, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(reqVar, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(claimsVar, cel.MapType(cel.StringType, cel.DynType)),
	)...)
})

// filter is a compiled spec.resourceFilter or resources[].filter.
type filter struct {
	prg cel.Program
}

// compileFilter parses and type-checks expr, which must be boolean. The
// reconciler calls it to report a bad expression on the Receiver; the
// server calls it again per request (it is cheap next to the API calls a
// request makes).
func compileFilter(expr string) (*filter, error) {
	env, err := filterEnv()
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	ast, issues := env.Compile(expr)
	if issues.Err() != nil {
		return nil, fmt.Errorf("failed to parse CEL expression %q: %w", expr, issues.Err())
	}
	if !ast.OutputType().IsExactType(types.BoolType) && !ast.OutputType().IsExactType(types.DynType) {
		return nil, fmt.Errorf("CEL expression %q must return a boolean, not %s", expr, ast.OutputType())
	}
	prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("failed to build CEL program for %q: %w", expr, err)
	}
	return &filter{prg: prg}, nil
}

// accept evaluates the filter on an object, a request body and the
// token claims. A nil filter accepts everything.
func (f *filter) accept(ctx context.Context, res, req, claims map[string]any) (bool, error) {
	if f == nil {
		return true, nil
	}
	if claims == nil {
		claims = map[string]any{}
	}
	val, _, err := f.prg.ContextEval(ctx, map[string]any{resVar: res, reqVar: req, claimsVar: claims})
	if err != nil {
		return false, fmt.Errorf("evaluating CEL expression: %w", err)
	}
	b, ok := val.(types.Bool)
	if !ok {
		return false, fmt.Errorf("CEL expression returned %s, not bool", val.Type().TypeName())
	}
	return bool(b), nil
}

// requestBody decodes a JSON object body for filters; anything else is an
// empty map, so filters that do not look at req still work.
func requestBody(body []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return map[string]any{}
	}
	return m
}
