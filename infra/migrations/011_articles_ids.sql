-- Articles by their integer id, on the write side. The commands that act on an article (rename,
-- attach to a media, translate, regenerate) find its stream from the id the client sends, in the
-- events table, without waiting for the articles read model: a client may act on an article the
-- moment its job has completed. Only the events that create an article are indexed, by the id
-- they carry (an integer in every one of them).
CREATE INDEX IF NOT EXISTS events_article_ids ON events (((data->>'article_id')::integer))
    WHERE type IN ('ArticleGenerated', 'ArticleTranslated');
