package commitstatus

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"

	"github.com/weir-gitops/weir/internal/runtime/celenv"
)

// keyEnv is built once (an Env is safe for concurrent use): Flux's CEL
// environment with the three variables of a commitStatusExpr.
var keyEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(append(celenv.FluxOptions(),
		cel.Variable("event", cel.DynType),
		cel.Variable("provider", cel.DynType),
		cel.Variable("alert", cel.DynType),
	)...)
})

// Key evaluates a Provider's commitStatusExpr. The expression sees, as
// Flux's does, three variables holding the objects as their JSON form:
// event (the event, its metadata with the Alert's summary and
// eventMetadata), provider and alert. It must return a non-empty string.
func Key(expr string, event, provider, alert any) (string, error) {
	env, err := keyEnv()
	if err != nil {
		return "", fmt.Errorf("commitStatusExpr: %w", err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return "", fmt.Errorf("commitStatusExpr does not compile: %w", iss.Err())
	}
	prg, err := env.Program(ast, cel.CostLimit(100_000))
	if err != nil {
		return "", fmt.Errorf("commitStatusExpr: %w", err)
	}
	vars := map[string]any{}
	for name, v := range map[string]any{"event": event, "provider": provider, "alert": alert} {
		m, err := asJSONMap(v)
		if err != nil {
			return "", fmt.Errorf("commitStatusExpr: encoding %s: %w", name, err)
		}
		vars[name] = m
	}
	out, _, err := prg.Eval(vars)
	if err != nil {
		return "", fmt.Errorf("evaluating commitStatusExpr: %w", err)
	}
	s, ok := out.Value().(string)
	if !ok {
		return "", fmt.Errorf("commitStatusExpr returned %s, not a string", out.Type().TypeName())
	}
	if s == "" {
		return "", fmt.Errorf("commitStatusExpr returned an empty string")
	}
	return s, nil
}

// asJSONMap returns v as encoding/json sees it, the form CEL's field
// selection reads.
func asJSONMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}
