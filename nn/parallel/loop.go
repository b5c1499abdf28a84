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
// kept for reuse, on a free list per body type, whose func value is bound
// once: once as many loops of a type exist as run at once, a call
// allocates nothing. Kernels that run on every training step use it:
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
	l.free.put(l)
}

// loop is a body and its Range bound as a func value.
type loop[B any, P Body[B]] struct {
	body B
	fn   func(lo, hi int)
	free *loops[B, P]
}

// loops is the free list of the loops of one body type. Unlike sync.Pool,
// it is never emptied by a collection and keeps no per-worker chains that
// grow when callers move between threads, so taking and returning a loop
// allocates nothing once the list has grown.
type loops[B any, P Body[B]] struct {
	mu   sync.Mutex
	list []*loop[B, P]
}

func (f *loops[B, P]) put(l *loop[B, P]) {
	f.mu.Lock()
	f.list = append(f.list, l)
	f.mu.Unlock()
}

// take returns a free loop, or a new one when none is free.
func (f *loops[B, P]) take() *loop[B, P] {
	f.mu.Lock()
	if n := len(f.list); n > 0 {
		l := f.list[n-1]
		f.list[n-1] = nil
		f.list = f.list[:n-1]
		f.mu.Unlock()
		return l
	}
	f.mu.Unlock()
	l := &loop[B, P]{free: f}
	l.fn = func(lo, hi int) { P(&l.body).Range(lo, hi) }
	return l
}

// loopLists holds a *loops[B, P] per body type.
var loopLists sync.Map

func takeLoop[B any, P Body[B]]() *loop[B, P] {
	key := reflect.TypeFor[B]()
	f, ok := loopLists.Load(key)
	if !ok {
		f, _ = loopLists.LoadOrStore(key, new(loops[B, P]))
	}
	return f.(*loops[B, P]).take()
}
