package health

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/weir-gitops/weir/internal/runtime/celenv"
)

const (
	// interruptEvery is how many comprehension iterations pass between
	// checks of the context, as in the API server.
	interruptEvery = 100
	// maxCachedPrograms bounds the program cache.
	maxCachedPrograms = 4096
)

// Variables of a readyExpr.
const (
	depVar  = "dep"
	selfVar = "self"
)

// mode says how an expression is compiled and evaluated.
type mode uint8

const (
	// healthMode parses without type-checking; the object's top-level
	// fields are the variables.
	healthMode mode = iota
	// readyMode type-checks against dep and self and requires a bool.
	readyMode
)

// Environments are built once: building one costs more than most
// compilations, and an Env is safe for concurrent use.
var (
	healthEnv = sync.OnceValues(func() (*cel.Env, error) {
		return cel.NewEnv(celenv.FluxOptions()...)
	})
	readyEnv = sync.OnceValues(func() (*cel.Env, error) {
		structType := cel.ObjectType("google.protobuf.Struct")
		return cel.NewEnv(append(celenv.FluxOptions(),
			cel.Variable(depVar, structType),
			cel.Variable(selfVar, structType))...)
	})
)

// program is one compiled expression.
type program struct {
	expr string
	prg  cel.Program
}

// compile turns expr into a program, from the cache when it was compiled
// before in the same mode.
func compile(m mode, expr string) (*program, error) {
	return programs.get(m, expr)
}

func compileUncached(m mode, expr string) (*program, error) {
	var (
		env *cel.Env
		err error
	)
	switch m {
	case readyMode:
		env, err = readyEnv()
	default:
		env, err = healthEnv()
	}
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	var (
		ast    *cel.Ast
		issues *cel.Issues
	)
	if m == readyMode {
		ast, issues = env.Compile(expr)
	} else {
		ast, issues = env.Parse(expr)
	}
	if issues.Err() != nil {
		return nil, issues.Err()
	}
	if m == readyMode && !ast.OutputType().IsExactType(types.BoolType) {
		return nil, fmt.Errorf("the expression's type is %s, not bool", ast.OutputType())
	}
	prg, err := env.Program(ast,
		cel.EvalOptions(cel.OptOptimize),
		cel.InterruptCheckFrequency(interruptEvery))
	if err != nil {
		return nil, err
	}
	return &program{expr: expr, prg: prg}, nil
}

// evalBool evaluates p over vars and requires a bool.
func (p *program) evalBool(ctx context.Context, vars map[string]any) (bool, error) {
	val, _, err := p.prg.ContextEval(ctx, vars)
	if err != nil {
		return false, err
	}
	b, ok := val.(types.Bool)
	if !ok {
		return false, fmt.Errorf("the result is %s, not bool", val.Type().TypeName())
	}
	return bool(b), nil
}

// programCache remembers compiled programs and compile errors by mode and
// text. Compiling happens outside the lock: two goroutines compiling the
// same new expression both do the work, and one result is kept.
type programCache struct {
	mu      sync.Mutex
	entries map[cacheKey]cacheEntry
	max     int
}

type cacheKey struct {
	mode mode
	expr string
}

type cacheEntry struct {
	prog *program
	err  error
}

var programs = newProgramCache(maxCachedPrograms)

func newProgramCache(capacity int) *programCache {
	return &programCache{entries: make(map[cacheKey]cacheEntry), max: capacity}
}

func (c *programCache) get(m mode, expr string) (*program, error) {
	key := cacheKey{mode: m, expr: expr}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return e.prog, e.err
	}
	prog, err := compileUncached(m, expr)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		return e.prog, e.err
	}
	if len(c.entries) >= c.max {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = cacheEntry{prog: prog, err: err}
	return prog, err
}

// len returns the number of cached entries.
func (c *programCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
