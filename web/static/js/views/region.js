// One region of the page drawn from a session's store: it picks its slice of the state and draws again only when
// a value of that slice changed (by identity), so a frame that touches the transcript leaves the header alone.

import { initialState } from '../state.js';

/**
 * pick(state) returns the region's slice as a flat object; draw(slice, state) renders it. bind(store) follows that store
 * (null: no session open, drawn from an empty state) and stops following the one before; binding the store
 * already followed does nothing.
 */
export function region(pick, draw) {
  let prev = null;
  let off = null;
  let bound; // the store followed (null: none), undefined before the first bind
  const run = (st) => {
    const slice = pick(st);
    if (prev && sameSlice(prev, slice)) return;
    prev = slice;
    draw(slice, st);
  };
  const current = () => (bound ? bound.state : initialState());
  return {
    bind(store) {
      if (store === bound) return;
      bound = store;
      if (off) off();
      off = null;
      prev = null;
      if (store) {
        off = store.subscribe(run);
        run(store.state);
      } else run(initialState());
    },
    /** Draws again from the current slice (what the draw reads beyond the state, e.g. a person's choice, changed). */
    redraw() {
      const slice = prev || pick(current());
      prev = slice;
      draw(slice, current());
    },
    /** Picks again and draws if the slice changed: what pick reads beyond the state (another store) changed. */
    refresh() {
      run(current());
    },
  };
}

function sameSlice(a, b) {
  for (const k of Object.keys(b)) if (a[k] !== b[k]) return false;
  return Object.keys(a).length === Object.keys(b).length;
}

/** The elements of ids ({key: id}) by key: a view finds its own elements. */
export function byId(ids) {
  const els = {};
  for (const [k, id] of Object.entries(ids)) els[k] = document.getElementById(id);
  return els;
}
