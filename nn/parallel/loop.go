package parallel

import (
	"reflect"
	"sync"
)

// Body is a loop body that carries its arguments: a struct whose pointer
// method Range(lo, hi) works on the indices [lo, hi).
type Body[B any] interface {
	*B
	Range(lo, hi int)
}

// Loop runs body.Range over [0, n) as For runs fn: disjoint ranges of at
// least grain indices, concurrently, returning when all have returned.
//
// A closure that captures its arguments is allocated on every call, since
// For hands it to other goroutines. Loop instead copies body into a loop
// kept for reuse, one pool per body type, whose func value is bound once:
// in steady state a call allocates nothing. Kernels that run on every
// training step use it:
//
//	type scaleBody struct{ x []float32; s float32 }
//
//	func (k *scaleBody) Range(lo, hi int) {
//		for i := lo; i < hi; i++ {
//			k.x[i] *= k.s
//		}
//	}
//
//	parallel.Loop(len(x), 4096, scaleBody{x, 2})
func Loop[B any, P Body[B]](n, grain int, body B) {
	if n <= 0 {
		return
	}
	l := takeLoop[B, P]()
	l.body = body
	For(n, grain, l.fn)
	var zero B
	l.body = zero // drop the references the arguments hold
	l.pool.Put(l)
}

// loop is a body and its Range bound as a func value.
type loop[B any, P Body[B]] struct {
	body B
	fn   func(lo, hi int)
	pool *sync.Pool
}

// loopPools holds a *sync.Pool of *loop per body type.
var loopPools sync.Map

func takeLoop[B any, P Body[B]]() *loop[B, P] {
	key := reflect.TypeFor[B]()
	p, ok := loopPools.Load(key)
	if !ok {
		p, _ = loopPools.LoadOrStore(key, new(sync.Pool))
	}
	pool := p.(*sync.Pool)
	if l, ok := pool.Get().(*loop[B, P]); ok {
		return l
	}
	l := &loop[B, P]{pool: pool}
	l.fn = func(lo, hi int) { P(&l.body).Range(lo, hi) }
	return l
}
