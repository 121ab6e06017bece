//! `HeightMap.PicogenNoise(frequency = 2, layerCount = 6, persistence = 0.5, seed = 42,
//! filter = "cosine", unitSize = 1000)`: picogen's `LayeredNoise` (spec height-slang §1.4) as a map,
//! so its noise is not locked inside Height-Slang. The same as
//! `FromHeightSlang("([2 LayeredNoise seed(S) frequency(F) layercount(L) filter(K) persistence(P)] x y)", unitSize)`.

use geogen_diag::codes;
use geogen_render::{Effect, KernelContext, Object, ObjectKind, Operation, RenderError};
use geogen_slang::format::plain_decimal;
use geogen_slang::noise::Filter;
use geogen_slang::Dialect;
use geogen_vm::{RuntimeError, Value};

use super::from_height_slang::{render_program, FromHeightSlang, UNIT_SIZE};
use crate::operation::{Call, Declared, Example, Family, Kind, Owner, Param, Receiver, Recorder, Signature};

#[derive(Clone, Debug)]
pub struct PicogenNoise {
    pub noise: FromHeightSlang,
}

impl PicogenNoise {
    /// The program of these parameters (numbers written so they read back exactly).
    pub fn program_text(frequency: f64, layer_count: u32, persistence: f64, seed: u32, filter: Filter) -> String {
        format!(
            "([2 LayeredNoise seed({seed}) frequency({frequency:?}) layercount({layer_count}) filter({}) persistence({})] x y)",
            filter.name(),
            plain_decimal(persistence)
        )
    }
}

impl Declared for PicogenNoise {
    const SIGNATURE: Signature = Signature {
        owner: Owner::HeightMap,
        name: "PicogenNoise",
        receiver: Receiver::Static,
        params: &[
            Param::new("frequency", Kind::Range { min: -1e6, max: 1e6, code: codes::GGE8401 }).or(2.0),
            Param::new("layerCount", Kind::Range { min: 0.0, max: 64.0, code: codes::GGE8401 }).or(6.0),
            Param::new("persistence", Kind::Range { min: -1e6, max: 1e6, code: codes::GGE8401 }).or(0.5),
            Param::new("seed", Kind::Range { min: 0.0, max: 4_294_967_295.0, code: codes::GGE8401 }).or(42.0),
            Param::new("filter", Kind::Choice { items: Filter::NAMES, code: codes::GGE8402 }).or_text("cosine"),
            Param::new("unitSize", UNIT_SIZE).or(1000.0),
        ],
        checks: &[],
        family: Family::Generator,
        summary: "picogen's LayeredNoise (value noise on a 256-cell lattice from MT19937 tables, `layerCount` \
                  octaves of doubling frequency, amplitude × `persistence` per octave; filter nearest, bilinear \
                  or cosine), reproduced to 1e-12, at x = mapX / unitSize, y = mapY / unitSize. Not \
                  normalised: with the defaults |h| ≤ 0.98. Independent of the script seed, as in picogen; \
                  layerCount and seed are truncated to whole numbers.",
        examples: &[
            Example {
                // At a lattice point every octave reads L(0, 0) = −0.14743114720271694 (seed 42):
                // one octave gives it, six give it × 1.96875 (spec height-slang §1.4).
                script: "yield HeightMap.PicogenNoise(1, 1, 0.5, 42, \"cosine\", 1);",
                size: (1, 1),
                expect: &[(0, 0, -0.147_431_15)],
            },
            Example { script: "yield HeightMap.PicogenNoise(2, 6);", size: (1, 1), expect: &[(0, 0, -0.290_255_07)] },
        ],
    };

    fn record(call: &Call, rec: &mut Recorder<'_, '_>) -> Result<Value, RuntimeError> {
        let filter = Filter::from_name(call.text("filter")?).unwrap_or(Filter::Cosine);
        let text = PicogenNoise::program_text(
            call.number("frequency")?,
            call.number("layerCount")?.trunc() as u32,
            call.number("persistence")?,
            call.number("seed")?.trunc() as u32,
            filter,
        );
        let noise = FromHeightSlang::compile(
            &text,
            call.number("unitSize")?,
            Dialect::Documented,
            rec.limits().max_call_depth,
        )?;
        rec.create(PicogenNoise { noise }, &[])
    }
}

impl Operation for PicogenNoise {
    fn name(&self) -> &str {
        "HeightMap.PicogenNoise"
    }
    fn arg_kinds(&self) -> &[ObjectKind] {
        &[]
    }
    fn effect(&self) -> Effect {
        Effect::Create(ObjectKind::Map)
    }
    fn describe_params(&self) -> String {
        format!("{}, {}", self.noise.text, self.noise.unit_size)
    }
    fn render(&self, ctx: &KernelContext, target: &mut Object, _: &[&Object]) -> Result<(), RenderError> {
        let noise = &self.noise;
        render_program(target.as_map_mut()?, ctx, noise.unit_size, &noise.program, &noise.text)
    }
}
