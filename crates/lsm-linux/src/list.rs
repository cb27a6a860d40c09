//! Huge containers (GTK 3 tree views with one accessible per cell, long lists): only the children
//! in and next to the visible area are read, found by probing points down that area.

use crate::atspi::{
    value_as_ref, Atspi, CoordKind, ObjRef, RawNode, IFACE_ACCESSIBLE, IFACE_COMPONENT, IFACE_TABLE,
};
use lsm_core::Rect;
use zbus::zvariant::OwnedObjectPath;

/// Above this many children only the visible ones are read (see `Atspi::visible_children`): a
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

    /// The children of a huge container that are on screen: what `view` (its visible area) shows
    /// at a few points down its left edge, every child between two such points when few enough
    /// rows fit between them, and a row of margin around each, at most `budget` in all. Returns
    /// the children, how many were left out for the budget, and a summary for the model.
    pub(crate) async fn visible_children(
        &self,
        node: &RawNode,
        view: Rect,
        coords: CoordKind,
        budget: usize,
    ) -> (Vec<ObjRef>, usize, String) {
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
        if indices.is_empty() {
            indices = (0..count.min(LIST_FALLBACK as i32)).collect();
        }
        let cut = indices.len().saturating_sub(budget);
        indices.truncate(budget);
        let read = indices.len();
        let (first, last) = (
            indices.first().copied().unwrap_or(0),
            indices.last().copied().unwrap_or(0),
        );
        let kids = self.children_at(obj, indices.into_iter()).await;
        let what = match rows {
            Some(r) if r > 0 && cols > 1 => format!("{r} rows × {cols} columns"),
            Some(r) if r > 0 => format!("{r} rows"),
            _ => format!("{count} items"),
        };
        let summary = if ranges.is_empty() {
            format!("{what} ({count} children); no visible child found, the first {read} were read")
        } else {
            format!(
                "{what} ({count} children); only the {read} in and next to the visible area \
                 (children {first}–{last}) were read: scroll it to see others"
            )
        };
        (kids, cut, summary)
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
