-- The analysis of a finished game (GET /v1/games/{id}/analysis), computed once by an analysis
-- worker and stored, so that every instance answers the same. A finished game without a row is
-- still to be analysed (games finished before this migration too): the workers' sweep finds it.
CREATE TABLE analyses (
    game_id  uuid NOT NULL PRIMARY KEY REFERENCES games (id),
    -- The Analysis JSON as the endpoint answers it (text: served byte for byte).
    analysis text NOT NULL
);
