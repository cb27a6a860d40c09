//! Huge containers (GTK 3 tree views with one accessible per cell, long lists): only the children
//! in and next to the visible area are read, found by probing points down that area; all of them
//! in order when hidden parts are asked for; and, for a query, those whose name matches it.

use crate::atspi::{
    value_as_ref, Atspi, CoordKind, ObjRef, RawNode, IFACE_ACCESSIBLE, IFACE_COMPONENT, IFACE_TABLE,
};
use futures_util::stream::StreamExt;
use lsm_core::model::Query;
use lsm_core::{RawElement, Rect};
use std::collections::HashSet;
use std::time::Instant;
use zbus::zvariant::OwnedObjectPath;

/// Above this many children only the visible ones are read (see `Atspi::huge_children`): a
/// `GetChildren` on a huge table makes the application create an accessible for every cell.
pub(crate) const MAX_BULK_CHILDREN: i32 = 512;
/// A container that manages its descendants (tables, trees) is read around its visible area
/// already above this many children.
pub(crate) const MAX_MANAGED_CHILDREN: i32 = 64;
/// Points probed down a huge container's visible area to find the children shown there.
pub(crate) const LIST_PROBES: i32 = 7;
/// No row is shorter than this (px): bounds how many children lie between two probes.
pub(crate) const MIN_ROW_PX: i32 = 8;
/// Children read from a huge container when probing finds none (no point lookup support).
pub(crate) const LIST_FALLBACK: usize = 64;
/// Points probed across a wide grid's visible area, per probed row.
const GRID_PROBES_ACROSS: i32 = 6;
/// At most this many rows and columns of a wide grid are read (a screen shows fewer).
const MAX_GRID_ROWS: i32 = 80;
const MAX_GRID_COLUMNS: i32 = 40;
/// Names asked for at once while searching a huge list for a query.
const SCAN_CONCURRENCY: usize = 64;

impl Atspi {
    /// The children at these indices, in order (all requests in flight at once).
    pub(crate) async fn children_at(&self, obj: &ObjRef, indices: impl Iterator<Item = i32>) -> Vec<ObjRef> {
        let calls = indices.map(|i| async move {
            self.call::<_, (String, OwnedObjectPath)>(obj, IFACE_ACCESSIBLE, "GetChildAtIndex", &(i,))
                .await
                .ok()
                .map(|(bus, path)| ObjRef::new(bus, path.as_str()))
        });
        futures_util::future::join_all(calls)
            .await
            .into_iter()
            .flatten()
            .filter(|r| !r.is_null())
            .collect()
    }

    /// Index of the child of `parent` at point (x, y) (`Component.GetAccessibleAtPoint` with
    /// `GetIndexInParent`), `None` when nothing is there or what is there is not a direct child.
    async fn child_index_at(&self, parent: &ObjRef, x: i32, y: i32, coords: CoordKind) -> Option<i32> {
        let (bus, path): (String, OwnedObjectPath) = self
            .call(
                parent,
                IFACE_COMPONENT,
                "GetAccessibleAtPoint",
                &(x, y, coords.atspi()),
            )
            .await
            .ok()?;
        let hit = ObjRef::new(bus, path.as_str());
        if hit.is_null() || hit == *parent {
            return None;
        }
        let (index, up) = tokio::join!(
            self.call::<_, i32>(&hit, IFACE_ACCESSIBLE, "GetIndexInParent", &()),
            self.prop(&hit, IFACE_ACCESSIBLE, "Parent"),
        );
        (value_as_ref(&up.ok()?).as_ref() == Some(parent))
            .then_some(index.ok()?)
            .filter(|i| *i >= 0)
    }

    /// The indices of the children of a huge container that are on screen: what `view` (its
    /// visible area) shows at a few points down its left edge, every child between two such
    /// points when few enough rows fit between them, and a row of margin around each. Also the
    /// table's size when it has one. Empty: nothing found there (no point lookup support).
    async fn visible_indices(&self, node: &RawNode, view: Rect, coords: CoordKind) -> (Vec<i32>, String) {
        let obj = &node.obj;
        let count = node.child_count;
        let table = node.has_interface("Table");
        let table_size = async {
            if !table {
                return (None, None);
            }
            let (rows, cols) = tokio::join!(
                self.prop_int(obj, IFACE_TABLE, "NRows"),
                self.prop_int(obj, IFACE_TABLE, "NColumns"),
            );
            (rows.ok(), cols.ok())
        };
        // Two columns of probes: near the left edge, and in the middle (a table's row headers
        // on the left may not answer).
        let span = (view.height - 3).max(0);
        let ys: Vec<i32> = (0..LIST_PROBES)
            .map(|k| view.y + 1 + span * k / (LIST_PROBES - 1))
            .collect();
        let xs = [view.x + 3.min(view.width / 2), view.x + view.width / 2];
        let probes = xs
            .iter()
            .flat_map(|&x| ys.iter().map(move |&y| (x, y)))
            .map(|(x, y)| self.child_index_at(obj, x, y, coords));
        let ((rows, cols), hits) = tokio::join!(table_size, futures_util::future::join_all(probes));
        if let (Some(r), Some(c)) = (rows, cols) {
            if c > 256 {
                // A spreadsheet's grid (16,384 columns): its cells are found by row and column.
                return self.visible_grid_cells(node, view, coords, r, c).await;
            }
        }
        let cols = cols.filter(|c| (1..=256).contains(c)).unwrap_or(1) as i32;
        let step = span / (LIST_PROBES - 1);
        let max_gap = (step / MIN_ROW_PX + 2) * cols;
        let mut ranges: Vec<(i32, i32)> = hits
            .chunks(ys.len().max(1))
            .flat_map(|column| visible_ranges(column, cols, max_gap, count))
            .collect();
        ranges.sort_unstable();
        let mut indices: Vec<i32> = Vec::new();
        for (a, b) in ranges.iter().copied() {
            let from = indices.last().map_or(a, |&l| a.max(l + 1));
            indices.extend(from..=b);
        }
        let what = match rows {
            Some(r) if r > 0 && cols > 1 => format!("{r} rows × {cols} columns"),
            Some(r) if r > 0 => format!("{r} rows"),
            _ => format!("{count} items"),
        };
        (indices, what)
    }

    /// The cells of a wide grid (a spreadsheet) that are on screen: probes across and down its
    /// visible area give the rows and columns shown, and every cell of that block is read, from
    /// the first visible row and column on (row-major indices, checked against the table's own
    /// row and column of each probed cell). Empty when the probes found no cell.
    async fn visible_grid_cells(
        &self,
        node: &RawNode,
        view: Rect,
        coords: CoordKind,
        rows: i64,
        cols: i64,
    ) -> (Vec<i32>, String) {
        let obj = &node.obj;
        let what = format!("{rows} rows × {cols} columns");
        let (w, h) = ((view.width - 6).max(0), (view.height - 3).max(0));
        let xs: Vec<i32> = (0..GRID_PROBES_ACROSS)
            .map(|k| view.x + 3 + w * k / (GRID_PROBES_ACROSS - 1))
            .collect();
        let ys: Vec<i32> = (0..LIST_PROBES)
            .map(|k| view.y + 1 + h * k / (LIST_PROBES - 1))
            .collect();
        let probes = ys
            .iter()
            .flat_map(|&y| xs.iter().map(move |&x| (x, y)))
            .map(|(x, y)| self.child_index_at(obj, x, y, coords));
        let hits: Vec<i32> = futures_util::future::join_all(probes)
            .await
            .into_iter()
            .flatten()
            .collect();
        let places = hits.iter().map(|&i| async move {
            let at = (i,);
            let (r, c) = tokio::join!(
                self.call::<_, i32>(obj, IFACE_TABLE, "GetRowAtIndex", &at),
                self.call::<_, i32>(obj, IFACE_TABLE, "GetColumnAtIndex", &at),
            );
            (i, r.ok(), c.ok())
        });
        let places = futures_util::future::join_all(places).await;
        let row_major = |i: i32, r: i32, c: i32| i as i64 == r as i64 * cols + c as i64;
        let cells: Vec<(i32, i32)> = places
            .iter()
            .filter_map(|&(i, r, c)| match (r, c) {
                (Some(r), Some(c)) if r >= 0 && c >= 0 && row_major(i, r, c) => Some((r, c)),
                _ => None,
            })
            .collect();
        let (Some(r0), Some(r1), Some(c0), Some(c1)) = (
            cells.iter().map(|p| p.0).min(),
            cells.iter().map(|p| p.0).max(),
            cells.iter().map(|p| p.1).min(),
            cells.iter().map(|p| p.1).max(),
        ) else {
            return (hits, what);
        };
        // A row and a column of margin on each side (partly shown at the edges; LibreOffice's
        // probed points can land a row low, see `CoordRule`).
        let (r0, c0) = ((r0 - 1).max(0), (c0 - 1).max(0));
        let r1 = (r1 as i64 + 1)
            .min(rows - 1)
            .min(r0 as i64 + MAX_GRID_ROWS as i64 - 1);
        let c1 = (c1 as i64 + 1)
            .min(cols - 1)
            .min(c0 as i64 + MAX_GRID_COLUMNS as i64 - 1);
        let mut indices = Vec::new();
        for r in r0 as i64..=r1 {
            for c in c0 as i64..=c1 {
                if let Ok(i) = i32::try_from(r * cols + c) {
                    indices.push(i);
                }
            }
        }
        (indices, what)
    }

    /// Reads the children of a huge container without asking for all of them (a `GetChildren`
    /// on a huge table makes the application create an accessible for every cell): those in and
    /// next to `view` (its visible area), or with `all` every child in order; with a `query`
    /// also those, anywhere in the list, whose name matches it (names searched until
    /// `scan_until`). At most `budget` are read. Says what was left out, by kind, and a summary
    /// for the model.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn huge_children(
        &self,
        node: &RawNode,
        view: Option<Rect>,
        coords: CoordKind,
        budget: usize,
        all: bool,
        query: Option<&Query>,
        scan_until: Instant,
    ) -> HugeRead {
        let obj = &node.obj;
        let count = node.child_count.max(0);
        let (visible, what) = match view {
            Some(v) if !all => self.visible_indices(node, v, coords).await,
            _ => (Vec::new(), format!("{count} items")),
        };
        let found_visible = !visible.is_empty();
        let (first, last) = (
            visible.first().copied().unwrap_or(0),
            visible.last().copied().unwrap_or(0),
        );
        let mut shown: Vec<i32> = if all {
            // In order, as many as may be read at all (a spreadsheet has billions of cells).
            (0..count.min(budget.min(i32::MAX as usize) as i32)).collect()
        } else if found_visible {
            visible
        } else {
            (0..count.min(LIST_FALLBACK as i32)).collect()
        };
        // The matches of a query come first: they are what was asked for.
        let (mut matches, mut searched, mut unsearched) = (Vec::new(), 0usize, 0usize);
        if let Some(q) = query {
            let skip: HashSet<i32> = if all {
                HashSet::new()
            } else {
                shown.iter().copied().collect()
            };
            let scan = self.scan_names(node, &skip, q, scan_until).await;
            (matches, searched, unsearched) = (scan.matches, scan.searched, scan.unsearched);
            let m: HashSet<i32> = matches.iter().copied().collect();
            shown.retain(|i| !m.contains(i));
        }
        let mut indices: Vec<i32> = matches.iter().copied().chain(shown).collect();
        let cut = indices.len().saturating_sub(budget);
        indices.truncate(budget);
        indices.sort_unstable();
        let read = indices.len();
        // Searched by name and not matching: not read, but not unknown either.
        let not_loaded = (count as usize).saturating_sub(read + cut + searched.saturating_sub(matches.len()));
        let kids = self.children_at(obj, indices.into_iter()).await;
        let mut summary = if all {
            format!("{what} ({count} children); {read} read in order")
        } else if !found_visible {
            format!("{what} ({count} children); no visible child found, the first {read} were read")
        } else {
            format!(
                "{what} ({count} children); only the {read} in and next to the visible area \
                 (children {first}–{last}) were read: scroll it to see others"
            )
        };
        if query.is_some() {
            summary.push_str(&format!(
                "; names of {searched} other children searched for the query, {} matched",
                matches.len()
            ));
            if unsearched > 0 {
                summary.push_str(&format!(", {unsearched} not searched (time budget)"));
            }
        }
        if cut > 0 {
            summary.push_str(&format!("; {cut} more not read (max_elements)"));
        }
        HugeRead {
            kids,
            cut,
            not_loaded,
            searched: searched.saturating_sub(matches.len()),
            unsearched,
            summary,
        }
    }

    /// The indices of the children (outside `skip`) whose name matches `q`: names from
    /// `GetChildren` + `Name` (by index for containers managing their descendants, whose child
    /// list would create every cell), many in flight, until `until`.
    async fn scan_names(&self, node: &RawNode, skip: &HashSet<i32>, q: &Query, until: Instant) -> Scan {
        let obj = &node.obj;
        let count = node.child_count.max(0);
        let until = tokio::time::Instant::from_std(until);
        let managed = node.has_state("manages_descendants");
        let listed: Option<Vec<ObjRef>> = if managed {
            None
        } else {
            match tokio::time::timeout_at(until, self.children_of(obj)).await {
                Ok(Ok(k)) if k.len() == count as usize => Some(k),
                _ => None,
            }
        };
        // Lazily: a spreadsheet has billions of cells, and the search stops at `until`.
        let total = (count as usize).saturating_sub(skip.len());
        let todo = (0..count).filter(move |i| !skip.contains(i));
        let listed = listed.as_deref();
        let names = futures_util::stream::iter(todo.map(|i| async move {
            let child = match listed.and_then(|l| l.get(i as usize)) {
                Some(c) => Some(c.clone()),
                None => self
                    .call::<_, (String, OwnedObjectPath)>(obj, IFACE_ACCESSIBLE, "GetChildAtIndex", &(i,))
                    .await
                    .ok()
                    .map(|(bus, path)| ObjRef::new(bus, path.as_str())),
            };
            let name = match child {
                Some(c) if !c.is_null() => self.prop_string(&c, IFACE_ACCESSIBLE, "Name").await.ok(),
                _ => None,
            };
            (i, name)
        }))
        .buffer_unordered(SCAN_CONCURRENCY);
        let mut names = std::pin::pin!(names);
        let mut scan = Scan::default();
        loop {
            // Checked on every name too: answers that are always ready would starve the timer.
            if tokio::time::Instant::now() >= until {
                break;
            }
            let next = tokio::select! {
                biased;
                n = names.next() => n,
                _ = tokio::time::sleep_until(until) => break,
            };
            let Some((i, name)) = next else { break };
            scan.searched += 1;
            if name.is_some_and(|n| q.matches(&named(n))) {
                scan.matches.push(i);
            }
        }
        scan.unsearched = total - scan.searched;
        scan.matches.sort_unstable();
        scan
    }
}

/// What [`Atspi::huge_children`] read and left out.
pub(crate) struct HugeRead {
    pub kids: Vec<ObjRef>,
    /// Left out for the element budget.
    pub cut: usize,
    /// Not read on purpose: outside the visible area (and not matching a query).
    pub not_loaded: usize,
    /// Searched by name for the query, not matching, not read.
    pub searched: usize,
    /// Names not searched for the query for lack of time.
    pub unsearched: usize,
    pub summary: String,
}

#[derive(Default)]
struct Scan {
    matches: Vec<i32>,
    searched: usize,
    unsearched: usize,
}

/// An element with only a name, for matching a query against a name alone.
fn named(name: String) -> RawElement {
    RawElement {
        native: String::new(),
        key: String::new(),
        parent: None,
        depth: 0,
        role: String::new(),
        name,
        description: String::new(),
        value: None,
        states: Vec::new(),
        actions: Vec::new(),
        bounds: None,
        summary: None,
    }
}

/// Which children of a huge container to read, as inclusive index ranges in ascending order,
/// from the child indices found at evenly spaced probe points down its visible area, top first
/// (`None`: nothing there, e.g. a column header or the empty space below the last row). At most
/// `max_gap` children fit between two neighbouring probes. Each hit brings its row (`cols`
/// children each side); two neighbouring hits bring everything between them when at most
/// `max_gap` children lie between (more means they are not on screen together); a hit next to a
/// probe that found nothing brings `max_gap` children on that side (rows, or headers, whose left
/// edge the probes missed). Every range gets a row of margin. Clamped to `0..count`.
fn visible_ranges(hits: &[Option<i32>], cols: i32, max_gap: i32, count: i32) -> Vec<(i32, i32)> {
    let cols = cols.max(1);
    let mut ranges: Vec<(i32, i32)> = Vec::new();
    for (k, hit) in hits.iter().enumerate() {
        let Some(h) = *hit else { continue };
        let (mut a, mut b) = (h - cols + 1, h + cols - 1);
        let before = k.checked_sub(1).and_then(|j| hits.get(j));
        let after = hits.get(k + 1);
        match before {
            Some(Some(p)) if (h - p).abs() <= max_gap => a = a.min(*p),
            Some(None) => a -= max_gap,
            _ => {}
        }
        match after {
            Some(Some(n)) if (n - h).abs() <= max_gap => b = b.max(*n),
            Some(None) => b += max_gap,
            _ => {}
        }
        ranges.push((a.min(b), a.max(b)));
    }
    let mut ranges: Vec<(i32, i32)> = ranges
        .into_iter()
        .map(|(a, b)| ((a - cols).max(0), (b + cols).min(count - 1)))
        .filter(|(a, b)| a <= b)
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(i32, i32)> = Vec::new();
    for (a, b) in ranges {
        match merged.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_ranges_cover_the_rows_on_screen() {
        // Header not hit (None), rows 0..17 of a 2-column table (children 2 + 2 * row).
        let hits = [None, Some(8), Some(14), Some(20), Some(26), Some(32), Some(36)];
        assert_eq!(visible_ranges(&hits, 2, 22, 20_002), vec![(0, 39)]);
        // Scrolled to row 5000: the header is far from the rows, the list ends below.
        let hits = [None, Some(10_010), Some(10_016), Some(10_022), None, None, None];
        assert_eq!(
            visible_ranges(&hits, 2, 22, 20_002),
            vec![(10_010 - 1 - 22 - 2, 10_022 + 1 + 22 + 2)]
        );
        // A hit far from its neighbour (a header above a list scrolled far) stays on its own.
        let hits = [Some(0), Some(10_010), Some(10_020)];
        assert_eq!(
            visible_ranges(&hits, 2, 22, 20_002),
            vec![(0, 3), (10_010 - 1 - 2, 10_020 + 1 + 2)]
        );
        assert!(visible_ranges(&[None, None], 1, 10, 100).is_empty());
        assert_eq!(visible_ranges(&[Some(98), Some(99)], 1, 10, 100), vec![(97, 99)]);
    }
}
